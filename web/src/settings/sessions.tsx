import { deviceLabel } from '../../../src/shared/device.ts'
import { Button, ErrorNote, useAction } from '../components/ui.tsx'
import * as client from '../lib/client.ts'
import { fromNow } from '../lib/format.ts'
import type { SessionInfo } from '../lib/types.ts'
import { ListRow, SettingsCard } from './card.tsx'
import { useList } from './use-list.ts'

/** "Chrome on Android" out of a user agent string, or the start of the string itself. */
const device = (ua: string | null): string =>
  ua ? (deviceLabel(ua) ?? ua.slice(0, 60)) : 'Unknown device'

/** Where the person is logged in; ending one logs that device out. */
export function SessionSettings() {
  const { items, error, reload } = useList(client.sessions)
  const [end, , endError] = useAction(async (s: SessionInfo) => {
    await client.endSession(s.id)
    await reload()
  })
  return (
    <SettingsCard id="sessions" title="Sessions">
      <ErrorNote error={error ?? endError} />
      <ul class="rows">
        {items?.map((s) => (
          <ListRow
            key={s.id}
            title={device(s.user_agent)}
            detail={
              <>
                {s.current ? 'This device' : `Last seen ${fromNow(s.last_seen_at)}`} · since{' '}
                {fromNow(s.created_at)}
              </>
            }
          >
            {!s.current && (
              <Button variant="quiet" onClick={() => end(s)}>
                Log out
              </Button>
            )}
          </ListRow>
        ))}
      </ul>
    </SettingsCard>
  )
}
