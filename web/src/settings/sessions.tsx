import { deviceLabel } from '../../../src/shared/device.ts'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import { del, enc } from '../lib/api.ts'
import { fromNow } from '../lib/format.ts'
import { useList } from './use-list.ts'

interface SessionInfo {
  id: string
  user_agent: string | null
  created_at: number
  last_seen_at: number
  current: boolean
}

/** "Chrome on Android" out of a user agent string, or the start of the string itself. */
const device = (ua: string | null): string =>
  ua ? (deviceLabel(ua) ?? ua.slice(0, 60)) : 'Unknown device'

/** Where the person is logged in; ending one logs that device out. */
export function SessionSettings() {
  const { items, error, reload } = useList<SessionInfo>('/v1/app/sessions', 'sessions')
  const [end, , endError] = useAction(async (s: SessionInfo) => {
    await del(`/v1/app/sessions/${enc(s.id)}`)
    await reload()
  })
  return (
    <section class="card stack" aria-labelledby="sessions">
      <h2 id="sessions">Sessions</h2>
      <ErrorNote error={error ?? endError} />
      <ul class="rows">
        {items?.map((s) => (
          <li key={s.id}>
            <div>
              <strong>{device(s.user_agent)}</strong>
              <span class="muted">
                {s.current ? 'This device' : `Last seen ${fromNow(s.last_seen_at)}`} · since{' '}
                {fromNow(s.created_at)}
              </span>
            </div>
            {!s.current && (
              <Button variant="quiet" onClick={() => end(s)}>
                Log out
              </Button>
            )}
          </li>
        ))}
      </ul>
    </section>
  )
}
