import { useEffect } from 'preact/hooks'
import type { ChannelSummary } from './types.ts'

/**
 * What waits on the person, where they see it without opening the app: the tab's title counts
 * the open questions and approvals ("(3) Hark") and so does the installed app's icon badge
 * (`navigator.setAppBadge`, where the platform has it). Open questions, not unread messages: a
 * question blocks an agent; a message does not.
 */
const TITLE = 'Hark'

interface Badging {
  setAppBadge?: (count?: number) => Promise<void>
  clearAppBadge?: () => Promise<void>
}

export const openCount = (channels: ChannelSummary[]) =>
  channels.reduce((n, c) => n + c.open_asks, 0)

export function useAttention(channels: ChannelSummary[] | null): void {
  const count = channels ? openCount(channels) : undefined
  useEffect(() => {
    if (count === undefined) return
    document.title = count > 0 ? `(${count}) ${TITLE}` : TITLE
    const badging = navigator as Navigator & Badging
    // Refused without an installed app or permission: the title still says it.
    const done = count > 0 ? badging.setAppBadge?.(count) : badging.clearAppBadge?.()
    done?.catch(() => {})
  }, [count])
  // Away from the list (settings) the count is not followed: the title stops claiming one.
  useEffect(
    () => () => {
      document.title = TITLE
    },
    [],
  )
}
