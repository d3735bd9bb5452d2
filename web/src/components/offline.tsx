import { useOffline } from '../lib/connection.ts'
import type { QueuedSend } from '../lib/offline-store.ts'
import { drop } from '../lib/outbox.ts'

/**
 * The offline cue: shown while the browser is offline or the server has been out of reach for
 * a few seconds (connection.ts), gone once it answers. It says what still works, so the person
 * goes on reading and writing instead of waiting.
 */
export function OfflineBanner() {
  const offline = useOffline()
  if (!offline) return null
  return (
    <p class="banner offline-banner" role="status">
      Offline — showing saved messages; what you write is sent when you’re back
    </p>
  )
}

/**
 * A message written but not yet taken by the server (lib/outbox.ts): at the end of the thread,
 * marked as waiting, or as refused with a way to dismiss it.
 */
export function PendingMessage({ send }: { send: QueuedSend }) {
  const { title, text, blocks } = send.body
  const files = (blocks ?? []).length
  // Attached files waiting with it, by name: the person sees they were not lost.
  const attached = (send.files ?? []).map((f) => f.name)
  return (
    <article class="msg mine pending" data-key={send.key} aria-label="You wrote (not sent yet)">
      {title && <h3 class="msg-title">{title}</h3>}
      {text && <p class="msg-text">{text}</p>}
      {files > 0 && <p class="muted">{files === 1 ? '1 file' : `${files} files`}</p>}
      {attached.length > 0 && (
        <ul class="muted pending-files" aria-label="Attachments">
          {attached.map((name, i) => (
            <li key={`${name}-${i}`}>{name}</li>
          ))}
        </ul>
      )}
      <footer class="msg-meta">
        {send.error ? (
          <>
            <span class="msg-state state-refused">Not sent: {send.error}</span>{' '}
            <button type="button" class="btn quiet" onClick={() => void drop(send.key)}>
              Dismiss
            </button>
          </>
        ) : (
          <span class="msg-state state-pending">Sending when online…</span>
        )}
      </footer>
    </article>
  )
}
