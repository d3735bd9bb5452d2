import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { errorText } from '../lib/api.ts'
import { bytes } from '../lib/format.ts'
import * as outbox from '../lib/outbox.ts'
import type { Message, MessageBody } from '../lib/types.ts'
import { Form } from './form.tsx'
import { Button, ErrorNote } from './ui.tsx'

/**
 * Writing to the agent: text and attachments, one message, so the agent gets the text and the
 * files together. It goes through the outbox (lib/outbox.ts), which uploads the files and sends
 * them as image or file blocks: offline it waits there, files too, shown as pending.
 */

export function Composer({
  channelId,
  onSent,
}: {
  channelId: string
  onSent: (m: Message) => void
}) {
  const [text, setText] = useState('')
  const [files, setFiles] = useState<File[]>([])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const picker = useRef<HTMLInputElement>(null)
  const box = useRef<HTMLTextAreaElement>(null)

  // Grow with the text, up to the stylesheet's cap (composer.css), then scroll; shrink back
  // when the text goes (after sending too, which empties it without an input event).
  useLayoutEffect(() => {
    const el = box.current
    if (!el) return
    el.style.height = 'auto'
    // scrollHeight leaves out the borders that the border-box height includes.
    el.style.height = `${el.scrollHeight + el.offsetHeight - el.clientHeight}px`
  }, [text])

  const send = async () => {
    if (busy || (!text.trim() && files.length === 0)) return
    setBusy(true)
    setError(null)
    try {
      const body: MessageBody = {}
      if (text.trim()) body.text = text
      // Through the outbox, files and all: kept and sent later when the server cannot be
      // reached now (it uploads the files, then sends them as image or file blocks).
      const message = await outbox.send(channelId, body, files)
      setText('')
      setFiles([])
      if (message !== 'queued') onSent(message)
      box.current?.focus()
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
    }
  }

  return (
    <Form class="composer" onSubmit={() => void send()}>
      {files.length > 0 && (
        <ul class="attachments" aria-label="Attachments">
          {files.map((f, i) => (
            <li key={`${f.name}-${i}`}>
              <span>
                {f.name} <span class="muted">{bytes(f.size)}</span>
              </span>
              <button
                type="button"
                class="chip-remove"
                aria-label={`Remove ${f.name}`}
                onClick={() => setFiles(files.filter((_, j) => j !== i))}
              >
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={error} />
      <div class="composer-row">
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          onChange={(e) => {
            setFiles([...files, ...Array.from(e.currentTarget.files ?? [])])
            e.currentTarget.value = ''
          }}
        />
        <Button
          variant="quiet"
          class="attach"
          aria-label="Attach files"
          onClick={() => picker.current?.click()}
        >
          <svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true">
            <path
              d="M16.5 6.5 8.9 14.1a2 2 0 0 0 2.8 2.8l7.6-7.6a4 4 0 0 0-5.6-5.6l-7.8 7.8a6 6 0 0 0 8.5 8.5l6.4-6.4"
              fill="none"
              stroke="currentColor"
              stroke-width="1.8"
              stroke-linecap="round"
            />
          </svg>
        </Button>
        <textarea
          ref={box}
          rows={1}
          aria-label="Message to the agent"
          placeholder="Write to the agent…"
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            // Enter sends, Shift+Enter is a new line (IME composition is left alone).
            if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
              e.preventDefault()
              void send()
            }
          }}
        />
        <Button type="submit" variant="primary" class="send" busy={busy}>
          Send
        </Button>
      </div>
    </Form>
  )
}
