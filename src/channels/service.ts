import { fail } from '../core/errors.ts'
import { cleanLabel } from '../core/labels.ts'
import { askKey, channelKey, userKey } from '../core/waiters.ts'
import type { WriteTx } from '../core/write-path.ts'
import { channelsChanged } from '../messages/feed.ts'
import { toRecord } from '../messages/records.ts'
import type { Message } from '../messages/schema.ts'
import { pushDevices } from '../push/service.ts'
import type { Ctx } from '../server/context.ts'
import type { Channel, ChannelSummary } from './schema.ts'
import type { ChannelRow } from './store.ts'

export const channelDetails = (ctx: Ctx, row: ChannelRow): Channel => ({
  id: row.id,
  label: row.label,
  created_at: row.created_at,
  updated_at: row.updated_at,
  open_asks: ctx.store.messages.countOpenAsks(row.id),
  pins: ctx.store.messages.countPins(row.id),
  push_devices: pushDevices(ctx, row),
})

/** The agent renames itself: the label is the channel's name in the person's app. */
export function renameChannel(ctx: Ctx, channel: ChannelRow, label: unknown): ChannelRow {
  const name = cleanLabel(label)
  return ctx.writes.apply((tx) => {
    const renamed = ctx.store.channels.rename(channel.id, name, ctx.clock.now())
    channelsChanged(ctx, tx, channel.user_id)
    return renamed
  })
}

/** A channel as the person's list shows it: with unread count and the last message. */
export function channelSummary(ctx: Ctx, row: ChannelRow): ChannelSummary {
  const last = ctx.store.messages.lastLive(row.id)
  return {
    ...channelDetails(ctx, row),
    unread: ctx.store.channels.unread(row.id, row.read_rid),
    last_message: last ? (toRecord(last) as Message) : null,
  }
}

export const listChannels = (ctx: Ctx, userId: string): ChannelSummary[] =>
  ctx.store.channels.byUser(userId).map((c) => channelSummary(ctx, c))

/** The person has seen everything up to now in this channel. */
export function markChannelRead(ctx: Ctx, channel: ChannelRow): ChannelSummary {
  ctx.writes.apply((tx) => {
    ctx.store.channels.markRead(channel.id, ctx.store.channels.lastRid(channel.id))
    channelsChanged(ctx, tx, channel.user_id) // the person's other devices drop the unread count
  })
  return channelSummary(ctx, ctx.store.channels.byId(channel.id) as ChannelRow)
}

/**
 * Deletes a channel with its messages, tokens and files. Its agent's token stops working at
 * once; long-polls held on it are answered.
 */
export function deleteChannel(ctx: Ctx, channel: ChannelRow): void {
  ctx.writes.apply((tx) => {
    const held = heldKeys(ctx, channel.id)
    ctx.store.channels.remove(channel.id)
    channelsGone(ctx, tx, [channel.id], held)
    channelsChanged(ctx, tx, channel.user_id)
  })
}

/**
 * The waiter keys of a channel: its change feed, its person's feed, and each open question
 * (an agent waiting for an answer parks on the question, not the channel). Read before the rows are deleted.
 */
export const heldKeys = (ctx: Ctx, channelId: string): string[] => [
  channelKey(channelId),
  userKey(ctx.store.channels.byId(channelId)?.user_id ?? ''),
  ...ctx.store.messages.openAsks(channelId).map((m) => askKey(m.id)),
]

/**
 * After channels were deleted (with the channel or with their person): their files go, and
 * the long-polls held on them are woken to find them gone.
 */
export function channelsGone(ctx: Ctx, tx: WriteTx, channelIds: string[], held: string[]): void {
  // Once the deletion is durable: a crash before that keeps the channel, so its files too.
  tx.after(() => {
    for (const id of channelIds) removeChannelFiles(ctx, id)
  })
  tx.wake(...held)
}

/**
 * Not awaited by the deletion: the channel is gone either way, and what a failure leaves
 * (S3 unreachable for a moment) has no record, so the next start's sweep removes it.
 */
export function removeChannelFiles(ctx: Ctx, channelId: string): Promise<void> {
  return ctx.blobs.deletePrefix(`${channelId}/`).catch((error) => {
    ctx.log.warn(`files of deleted channel ${channelId} not all removed (swept at start): ${error}`)
  })
}

/** One of the person's channels; anyone else's is 404, as if it did not exist. */
export function personChannel(ctx: Ctx, userId: string, id: string): ChannelRow {
  const channel = ctx.store.channels.byId(id)
  if (!channel || channel.user_id !== userId) throw fail.notFound('channel')
  return channel
}
