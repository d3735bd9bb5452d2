import type { Ctx, Tx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { cleanLabel } from '../core/labels.ts'
import { askKey, channelKey, userKey } from '../core/waiters.ts'
import type { Channel } from './schema.ts'
import type { ChannelRow } from './store.ts'

export const channelDetails = async (ctx: Ctx, row: ChannelRow): Promise<Channel> => ({
  id: row.id,
  label: row.label,
  created_at: row.created_at,
  updated_at: row.updated_at,
  open_asks: await ctx.store.messages.countOpenAsks(row.id),
  pins: await ctx.store.messages.countPins(row.id),
  // The person's devices, counted through the context's stores as the two counts above are:
  // a count of rows, no push logic, so channels imports nothing of push (which is above it).
  push_devices: await ctx.store.push.countByUser(row.user_id),
})

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

/** The person has seen everything up to now in this channel; the channel as it is then. */
export async function markChannelRead(ctx: Ctx, channel: ChannelRow): Promise<ChannelRow> {
  await ctx.writes.apply(async (tx) => {
    await tx.store.channels.markRead(channel.id, await tx.store.channels.lastRid(channel.id))
    await channelsChanged(tx, channel.user_id) // the person's other devices drop the unread count
  })
  return (await ctx.store.channels.byId(channel.id)) as ChannelRow
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
