import { channelDetails } from '../../channels/service.ts'
import type { ChannelRow } from '../../channels/store.ts'
import type { Ctx } from '../../core/context.ts'
import { toRecord } from '../records.ts'
import type { Message } from '../schema.ts'
import type { ChannelSummary } from './schema.ts'

/**
 * The person's channel list: each channel with its unread count and its last message. A read
 * over the channels and their messages, so it lives with the messages, above channels.
 */

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
