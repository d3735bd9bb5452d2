import { useEffect, useState } from 'preact/hooks'
import { get, post } from './api.ts'
import type { ChannelSummary } from './types.ts'

/**
 * The person's channels, shared by the list and the thread header. The server has no
 * person-wide change feed yet, so the list polls while the app is visible (a thread's own
 * feed is a true long-poll and nudges the list whenever it changes).
 */
const POLL_MS = 5000

let channels: ChannelSummary[] | null = null
const subscribers = new Set<(c: ChannelSummary[] | null) => void>()
let timer: ReturnType<typeof setTimeout> | undefined
let inflight: Promise<void> | undefined

function publish(next: ChannelSummary[]) {
  channels = next
  for (const s of subscribers) s(channels)
}

export function refreshChannels(): Promise<void> {
  inflight ??= get<{ channels: ChannelSummary[] }>('/v1/app/channels')
    .then((r) => publish(r.channels))
    .catch(() => {
      // Offline or logged out: the thread and the next poll say so; keep what we have.
    })
    .finally(() => {
      inflight = undefined
    })
  return inflight
}

/** One channel changed (read, renamed): fold it in without a round trip. */
export function updateChannel(channel: ChannelSummary) {
  if (channels) publish(channels.map((c) => (c.id === channel.id ? channel : c)))
}

export function forgetChannel(id: string) {
  if (channels) publish(channels.filter((c) => c.id !== id))
}

export const markRead = (id: string) =>
  post<{ channel: ChannelSummary }>(`/v1/app/channels/${encodeURIComponent(id)}/read`)
    .then((r) => updateChannel(r.channel))
    .catch(() => {})

function schedule() {
  clearTimeout(timer)
  if (subscribers.size === 0) return
  timer = setTimeout(async () => {
    if (document.visibilityState === 'visible') await refreshChannels()
    schedule()
  }, POLL_MS)
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && subscribers.size > 0) void refreshChannels()
})

export function useChannels(): ChannelSummary[] | null {
  const [value, setValue] = useState(channels)
  useEffect(() => {
    subscribers.add(setValue)
    setValue(channels)
    if (subscribers.size === 1) {
      void refreshChannels()
      schedule()
    }
    return () => {
      subscribers.delete(setValue)
      if (subscribers.size === 0) clearTimeout(timer)
    }
  }, [])
  return value
}
