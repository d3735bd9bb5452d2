import type { ChannelRow } from '../channels/store.ts'
import { fail } from '../core/errors.ts'
import { type Abortable, pollFor, userKey } from '../core/waiters.ts'
import type { Ctx, Tx } from '../server/context.ts'
import { toRecord } from './records.ts'
import type { DeletedMessage, FeedResponse, Message } from './schema.ts'

/**
 * The person's side of the feed: one change feed across all their channels (what keeps the
 * app's channel list live), and a channel's tail (a thread opens at its end and pages back
 * instead of reading its whole history).
 */

export interface PersonFeedOptions {
  since: number
  waitMs: number
  limit: number
  signal?: Abortable
}

/**
 * A channel of this person was added, renamed, read or deleted. That is no message, but it
 * takes the next number of the person's change sequence, so their feed answers it exactly
 * once, even when it happens while the app is between two polls or the server restarts:
 * every open app then refreshes its channel list.
 */
export async function channelsChanged(tx: Tx, userId: string): Promise<void> {
  await tx.store.messages.nextSeq(userId)
  tx.wake(userKey(userId))
}

/**
 * Changes to any of the person's messages after `since`, oldest change first, the same
 * records and cursor as a channel's feed (one change sequence per person: a cursor moves with
 * this person's changes only). A change to their channels themselves comes as an answer with
 * no messages and a cursor past it; the app refetches its list on every answer.
 */
export async function readPersonFeed(
  ctx: Ctx,
  userId: string,
  opts: PersonFeedOptions,
): Promise<FeedResponse> {
  const read = async (): Promise<FeedResponse | undefined> => {
    // The person's last change number before the rows: a change committed between the two
    // reads is in the rows, past `head`, so none falls between (the cursor takes the later).
    const head = await ctx.store.messages.currentSeq(userId)
    const rows = await ctx.store.messages.personFeed(userId, opts.since, opts.limit + 1)
    const hasMore = rows.length > opts.limit
    if (hasMore) rows.pop()
    // Nothing numbered after the cursor: wait. A number with no message row behind it is a
    // change to a channel (or the messages of a channel since deleted).
    if (rows.length === 0 && head <= opts.since) return undefined
    // Every change up to `head` is on this page unless it was cut short: continue from `head`,
    // past the channel changes too, or from the page's last change.
    const last = rows.at(-1)?.seq ?? 0
    const cursor = hasMore ? last : Math.max(head, opts.since, last)
    return { messages: rows.map(toRecord), cursor, has_more: hasMore }
  }
  const result = await pollFor(ctx.waiters, userKey(userId), opts.waitMs, opts.signal, read)
  return result ?? { messages: [], cursor: opts.since, has_more: false }
}

/**
 * The newest `count` live, unpinned messages of a channel (before message `before`, when
 * given), oldest first. `has_more` says older ones exist; `cursor` is where the channel's
 * change feed continues from, read in the same snapshot so no change falls in between.
 */
export async function readTail(
  ctx: Ctx,
  channel: ChannelRow,
  count: number,
  before: string | undefined,
): Promise<FeedResponse> {
  let beforeRid = Number.MAX_SAFE_INTEGER
  if (before !== undefined) {
    const row = await ctx.store.messages.byId(before)
    if (!row || row.channel_id !== channel.id) {
      throw fail.invalid('before', 'must be the id of a message in this channel')
    }
    beforeRid = row.rid
  }
  // The cursor before the rows: a change committed between the two reads is in the page and
  // comes again from the feed (an app replaces a message by its id), never missed.
  const cursor = await ctx.store.messages.currentSeq(channel.user_id)
  const rows = await ctx.store.messages.tail(channel.id, beforeRid, count + 1)
  const hasMore = rows.length > count
  if (hasMore) rows.pop()
  const messages = rows.reverse().map(toRecord) as (Message | DeletedMessage)[]
  return { messages, cursor, has_more: hasMore }
}
