import * as client from './client.ts'
import { pollSignal, waitToRetry } from './connection.ts'
import { saveChannels, savedChannels } from './offline-store.ts'
import { sharedLive } from './shared-live.ts'
import type { ChannelSummary } from './types.ts'

/**
 * The person's channels, shared by the list and the thread header, kept live by one long-poll
 * on the person-wide feed (`client.personFeed`) while anything shows them. The list's numbers
 * (unread, open questions, last message) are the server's, so every answer of the feed —
 * a message changed anywhere, or a channel added, renamed, read or deleted — refetches it.
 * The last list read is kept in IndexedDB, so the app opened offline shows it.
 */
const WAIT_SECONDS = 25

const channels = sharedLive<ChannelSummary[]>(follow)
/** Numbers each read, so an answer that arrives after a newer one's is dropped. */
let reads = 0

function publish(next: ChannelSummary[]) {
  channels.set(next)
  void saveChannels(next)
}

/** The saved list, shown when the first read fails (offline), unless one came meanwhile. */
async function showSaved() {
  const list = await savedChannels<ChannelSummary>()
  if (list && channels.value === null) channels.set(list)
}

/**
 * Reads the list again (never reusing a read already under way: it may predate the change
 * that asked for this one). Answers the feed cursor it is current to; undefined when offline.
 */
export async function refreshChannels(): Promise<number | undefined> {
  const read = ++reads
  try {
    const r = await client.channels()
    if (read === reads) publish(r.channels)
    return r.cursor
  } catch {
    return undefined // offline or logged out: the thread says so; keep what we have
  }
}

/** One channel changed (read, renamed): fold it in without a round trip. */
export function updateChannel(channel: ChannelSummary) {
  if (channels.value) publish(channels.value.map((c) => (c.id === channel.id ? channel : c)))
}

export function forgetChannel(id: string) {
  if (channels.value) publish(channels.value.filter((c) => c.id !== id))
}

export const markRead = (id: string) =>
  client
    .markChannelRead(id)
    .then(updateChannel)
    .catch(() => {})

/** Holds the feed open until `signal` aborts; retries (connection.ts) while the server is away. */
async function follow(signal: AbortSignal) {
  let cursor: number | undefined
  let failures = 0
  while (!signal.aborted) {
    cursor ??= await refreshChannels()
    if (cursor === undefined) {
      if (failures === 0) await showSaved()
      await waitToRetry(++failures, signal)
      continue
    }
    const poll = pollSignal(signal)
    try {
      const page = await client.personFeed(cursor, WAIT_SECONDS, poll.signal)
      failures = 0
      // An empty answer is a timeout or a change to the channels themselves: cheap either way.
      if (!page.has_more) await refreshChannels()
      cursor = page.cursor
    } catch (error) {
      if (signal.aborted) return
      // Back online mid-poll: poll again at once; a failure starts again from a fresh list.
      if ((error as Error).name === 'AbortError') continue
      cursor = undefined
      await waitToRetry(++failures, signal)
    } finally {
      poll.done()
    }
  }
}

document.addEventListener('visibilitychange', () => {
  // A phone may have frozen the long-poll in the background: catch up on coming back.
  if (document.visibilityState === 'visible' && channels.watched) void refreshChannels()
})

export const useChannels = (): ChannelSummary[] | null => channels.use()
