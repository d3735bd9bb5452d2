import type { ChannelRow } from '../channels/store.ts'
import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { type Abortable, channelKey, pollFor, userKey } from '../core/waiters.ts'
import { feedJson, toRecord } from './records.ts'
import type { DeletedMessage, FeedResponse, Message } from './schema.ts'
import type { Sender } from './service.ts'
import type { MessageRow } from './store.ts'

/**
 * Reading the feeds. The person's side: one change feed across all their channels (what keeps
 * the app's channel list live), and a channel's tail (a thread opens at its end and pages back
 * instead of reading its whole history). The agent's side (below): its channel's change feed,
 * held by the thousand, its pages shared by the polls one change wakes.
 */

export interface PersonFeedOptions {
  since: number
  waitMs: number
  limit: number
  signal?: Abortable
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

/** The agent's side: a channel's change feed, its pages shared by the polls one change wakes. */

export interface FeedOptions {
  since: number
  waitMs: number
  sender?: Sender
  /** The agent's reads mark the person's messages seen, unless it peeks. */
  markSeen: boolean
  limit: number
  signal?: Abortable
}

interface FeedPage {
  rows: readonly MessageRow[]
  hasMore: boolean
  /**
   * The answer when no reader marks anything, as encoded bytes: serialized and encoded once for
   * every poll that reads this page, each poll's response a reference to the same bytes.
   */
  body?: Blob
  /**
   * The answer of the readers that mark the person's messages seen: the first marks them (one
   * write), and the others of the same wake answer the same bytes with the same cursor instead
   * of marking again (each mark is a change: a poll marking alone would give the others a new
   * change to wake for, one after another).
   */
  marked?: Promise<Blob>
}

/**
 * Pages read since the last change, shared by identical reads. One change wakes every poll of
 * its channel at once, and they mostly ask for the same page: the first reads it, serializes
 * and encodes it; the others reuse those bytes, with the same cursor. A page is kept only while no change happened (every change calls `waiters.wake`)
 * and only until the current turn of the event loop ends. One per context (`ctx.feedPages`).
 */
export class SharedPages {
  private wakes = -1
  private pages = new Map<string, Promise<FeedPage>>()

  /** The page under `key`, read by `read` unless an identical read made it since the last change. */
  get(wakes: number, key: string, read: () => Promise<FeedPage>): Promise<FeedPage> {
    if (wakes !== this.wakes) {
      this.wakes = wakes
      const pages = new Map<string, Promise<FeedPage>>()
      this.pages = pages
      // Dropped at the end of this turn: a page is shared by the polls one change woke, and an
      // idle server holds none.
      setImmediate(() => {
        if (this.pages !== pages) return
        this.pages = new Map()
        this.wakes = -1
      })
    }
    let page = this.pages.get(key)
    if (!page) {
      page = read()
      this.pages.set(key, page)
    }
    return page
  }
}

function feedPage(ctx: Ctx, channelId: string, opts: FeedOptions): Promise<FeedPage> {
  const key = `${channelId}\n${opts.since}\n${opts.limit}\n${opts.sender ?? ''}`
  return ctx.feedPages.get(ctx.waiters.wakes, key, async () => {
    const rows = await ctx.store.messages.feed(channelId, opts.since, opts.limit + 1, opts.sender)
    const hasMore = rows.length > opts.limit
    if (hasMore) rows.pop()
    return { rows, hasMore }
  })
}

/** The feed's answer: JSON text, or JSON bytes shared with the other polls of one wake. */
export type FeedBody = string | Blob

/** Marks `unseen` seen (a write on the way of a read) and answers the page with the marks. */
async function markSeen(
  ctx: Ctx,
  channel: ChannelRow,
  page: FeedPage,
  unseen: readonly MessageRow[],
): Promise<Blob> {
  const rows = [...page.rows]
  let cursor = (rows.at(-1) as MessageRow).seq
  const now = ctx.clock.now()
  // A write on the way of a read: durable before this answer leaves (core/write-path.ts).
  const updated = await ctx.writes.apply(async (tx) => {
    tx.wake(channelKey(channel.id), userKey(channel.user_id))
    const out: MessageRow[] = []
    for (const r of unseen) out.push(await tx.store.messages.setState(r.rid, 'seen', now))
    return out
  })
  const marked = new Map(updated.map((r) => [r.rid, r]))
  for (let i = 0; i < rows.length; i++) {
    const m = marked.get((rows[i] as MessageRow).rid)
    if (m) rows[i] = m
  }
  // Marking took new change numbers; step over them so this reader does not see its own
  // marks again — unless a page was cut short, where the rest must still come.
  if (!page.hasMore) cursor = Math.max(...rows.map((r) => r.seq))
  return new Blob([feedJson(rows, cursor, page.hasMore)])
}

export function readFeed(ctx: Ctx, channel: ChannelRow, opts: FeedOptions): Promise<FeedBody> {
  const read = async (): Promise<FeedBody | undefined> => {
    const page = await feedPage(ctx, channel.id, opts)
    if (page.rows.length === 0) {
      // A deleted channel answers its held polls at once (its token fails on the next call).
      return (await ctx.store.channels.byId(channel.id))
        ? undefined
        : feedJson([], opts.since, false)
    }
    const unseen = opts.markSeen
      ? page.rows.filter((r) => r.sender === 'human' && r.state === null && r.deleted_at === null)
      : []
    // The polls one change woke mark the page's messages once, all together, and answer alike.
    if (unseen.length > 0) {
      page.marked ??= markSeen(ctx, channel, page, unseen)
      return page.marked
    }
    page.body ??= new Blob([
      feedJson(page.rows, (page.rows.at(-1) as MessageRow).seq, page.hasMore),
    ])
    return page.body
  }
  // A `then`, not an async function: a held poll waits here (bench/longpolls.ts).
  return pollFor(ctx.waiters, channelKey(channel.id), opts.waitMs, opts.signal, read).then(
    (result) => result ?? feedJson([], opts.since, false),
  )
}

/** A live message of this channel, or 404 (another channel's ids do not exist here). */

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../core/context.ts' {
  interface Ctx {
    /** Feed pages shared by the polls one change wakes. */
    feedPages: SharedPages
  }
}
