import { cleanLabel } from '../people/service.ts'
import type { Ctx } from '../server/context.ts'
import { fail } from '../server/errors.ts'
import type { Channel } from './schema.ts'
import type { ChannelRow } from './store.ts'

export const channelDetails = (ctx: Ctx, row: ChannelRow): Channel => ({
  id: row.id,
  label: row.label,
  created_at: row.created_at,
  updated_at: row.updated_at,
  open_asks: ctx.store.messages.countOpenAsks(row.id),
  pins: ctx.store.messages.countPins(row.id),
})

/** The agent renames itself: the label is the channel's name in the person's app. */
export function renameChannel(ctx: Ctx, channel: ChannelRow, label: unknown): ChannelRow {
  return ctx.store.channels.rename(channel.id, cleanLabel(label), ctx.clock.now())
}

export const listChannels = (ctx: Ctx, userId: string): Channel[] =>
  ctx.store.channels.byUser(userId).map((c) => channelDetails(ctx, c))

/** One of the person's channels; anyone else's is 404, as if it did not exist. */
export function personChannel(ctx: Ctx, userId: string, id: string): ChannelRow {
  const channel = ctx.store.channels.byId(id)
  if (!channel || channel.user_id !== userId) throw fail.notFound('channel')
  return channel
}
