import { useEffect, useState } from 'preact/hooks'
import { useChannels } from './channels.ts'
import * as client from './client.ts'
import type { Message } from './types.ts'

/**
 * What waits on the person across every agent: their open questions and approvals, oldest
 * first (`GET /v1/app/asks`). It rides on the channel list's live feed (channels.ts): every
 * change there publishes a new list, and a new list reads this again. When no channel counts
 * an open question there is nothing to read, so a quiet day costs no extra request.
 */

/** The last list read, so a screen that mounts again shows it at once. */
let last: Message[] | null = null
/** Numbers each read, so an answer that arrives after a newer one's is dropped. */
let reads = 0

export function useOpenAsks(): Message[] | null {
  const channels = useChannels()
  const [asks, setAsks] = useState(last)
  useEffect(() => {
    if (!channels) return
    const read = ++reads
    const publish = (next: Message[]) => {
      if (read !== reads) return
      last = next
      setAsks(next)
    }
    if (channels.every((c) => c.open_asks === 0)) {
      publish([])
      return
    }
    client.openAsks().then(publish, () => {
      // Offline: keep what is shown; the next change of the feed reads again.
    })
  }, [channels])
  return asks
}
