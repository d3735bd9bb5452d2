import type { ChannelRow } from '../channels/store.ts'
import type { Ctx, Tx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { askKey, channelKey, userKey } from '../core/waiters.ts'
import type { MessageRow } from './store.ts'

/**
 * A message's row as every service of this domain meets it: found in its channel, and
 * announced once it changed. Below both the messages' service and the questions' (an edit
 * expires an overdue question first; a question is found and announced as a message), so
 * neither imports the other for these.
 */

export async function findMessage(ctx: Ctx, channel: ChannelRow, id: string): Promise<MessageRow> {
  const row = await ctx.store.messages.byId(id)
  if (!row || row.channel_id !== channel.id || row.deleted_at !== null) {
    throw fail.notFound('message')
  }
  return row
}

/**
 * Tells every long-poll watching this channel (and this question) that something changed,
 * and the person's own feed across all their channels.
 */
export async function announce(tx: Tx, row: MessageRow, owner?: string): Promise<void> {
  // `owner`: the channel's person when the caller holds the channel (no read: on Postgres a
  // round trip while the person's row is locked).
  const person = owner === undefined ? await ownerKey(tx, row.channel_id) : [userKey(owner)]
  tx.wake(channelKey(row.channel_id), askKey(row.id), ...person)
}

/** The person's waiter key for a channel (none once the channel is gone). */
async function ownerKey(tx: Tx, channelId: string): Promise<string[]> {
  const owner = (await tx.store.channels.byId(channelId))?.user_id
  return owner ? [userKey(owner)] : []
}
