import type { Ctx, Tx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { cleanLabel } from '../core/labels.ts'
import { askKey, channelKey, userKey } from '../core/waiters.ts'
import { channelsChanged } from '../messages/feed.ts'
import { toRecord } from '../messages/records.ts'
import type { Message } from '../messages/schema.ts'
import { pushDevices } from '../push/service.ts'
import type { Channel, ChannelSummary } from './schema.ts'
import type { ChannelRow } from './store.ts'

export const channelDetails = async (ctx: Ctx, row: ChannelRow): Promise<Channel> => ({
  id: row.id,
  label: row.label,
  created_at: row.created_at,
  updated_at: row.updated_at,
  open_asks: await ctx.store.messages.countOpenAsks(row.id),
  pins: await ctx.store.messages.countPins(row.id),
  push_devices: await pushDevices(ctx, row),
})

/** The agent renames itself: the label is the channel's name in the person's app. */
export async function renameChannel(
  ctx: Ctx,
  channel: ChannelRow,
  label: unknown,
): Promise<ChannelRow> {
  const name = cleanLabel(label)
  return await ctx.writes.apply(async (tx) => {
    const renamed = await tx.store.channels.rename(channel.id, name, ctx.clock.now())
    await channelsChanged(tx, channel.user_id)
    return renamed
  })
}

/** A channel as the person's list shows it: with unread count and the last message. */
export async function channelSummary(ctx: Ctx, row: ChannelRow): Promise<ChannelSummary> {
  const last = await ctx.store.messages.lastLive(row.id)
  return {
    ...(await channelDetails(ctx, row)),
    unread: await ctx.store.channels.unread(row.id, row.read_rid),
    last_message: last ? (toRecord(last) as Message) : null,
  }
}

export async function listChannels(ctx: Ctx, userId: string): Promise<ChannelSummary[]> {
  const out: ChannelSummary[] = []
  for (const c of await ctx.store.channels.byUser(userId)) out.push(await channelSummary(ctx, c))
  return out
}

/** The person has seen everything up to now in this channel. */
export async function markChannelRead(ctx: Ctx, channel: ChannelRow): Promise<ChannelSummary> {
  await ctx.writes.apply(async (tx) => {
    await tx.store.channels.markRead(channel.id, await tx.store.channels.lastRid(channel.id))
    await channelsChanged(tx, channel.user_id) // the person's other devices drop the unread count
  })
  return await channelSummary(ctx, (await ctx.store.channels.byId(channel.id)) as ChannelRow)
}

/**
 * Deletes a channel with its messages, tokens and files. Its agent's token stops working at
 * once; long-polls held on it are answered.
 */
export async function deleteChannel(ctx: Ctx, channel: ChannelRow): Promise<void> {
  await ctx.writes.apply(async (tx) => {
    const held = await heldKeys(tx, channel.id)
    await tx.store.channels.remove(channel.id)
    channelsGone(ctx, tx, [channel.id], held)
    await channelsChanged(tx, channel.user_id)
  })
}

/**
 * The waiter keys of a channel: its change feed, its person's feed, and each open question
 * (an agent waiting for an answer parks on the question, not the channel). Read before the rows are deleted.
 */
export const heldKeys = async (tx: Tx, channelId: string): Promise<string[]> => [
  channelKey(channelId),
  userKey((await tx.store.channels.byId(channelId))?.user_id ?? ''),
  ...(await tx.store.messages.openAsks(channelId)).map((m) => askKey(m.id)),
]

/**
 * After channels were deleted (with the channel or with their person): their files go, and
 * the long-polls held on them are woken to find them gone.
 */
export function channelsGone(ctx: Ctx, tx: Tx, channelIds: string[], held: string[]): void {
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
export async function personChannel(ctx: Ctx, userId: string, id: string): Promise<ChannelRow> {
  const channel = await ctx.store.channels.byId(id)
  if (!channel || channel.user_id !== userId) throw fail.notFound('channel')
  return channel
}
