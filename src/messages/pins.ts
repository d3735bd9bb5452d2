import type { ChannelRow } from '../channels/store.ts'
import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { LIMITS } from './limits.ts'
import type { Pin, PutPinRequest } from './pin-schema.ts'
import { messageOf } from './records.ts'
import type { EditRequest } from './schema.ts'
import { deleteRow, editRow, replaceRow, sendMessage } from './service.ts'
import type { MessageRow } from './store.ts'

/**
 * Pins are messages with a key: the app shows them above the thread and they change in place.
 * They travel through the same change feed as every other message (with `pin: key`).
 */
const KEY = /^[A-Za-z0-9._:-]+$/

function checkKey(key: string): string {
  if (key.length < 1 || key.length > LIMITS.pinKeyChars || !KEY.test(key)) {
    throw fail.invalid(
      'key',
      `must be 1 to ${LIMITS.pinKeyChars} letters, digits or . _ - : characters`,
    )
  }
  return key
}

export const toPin = (row: MessageRow): Pin => ({
  key: row.pin_key as string,
  message: messageOf(row),
})

async function findPin(ctx: Ctx, channel: ChannelRow, key: string): Promise<MessageRow> {
  const row = await ctx.store.messages.pin(channel.id, checkKey(key))
  if (!row) throw fail.notFound('pin')
  return row
}

/** Creates the pin, or replaces its body when the key is taken. */
export async function putPin(
  ctx: Ctx,
  channel: ChannelRow,
  key: string,
  req: PutPinRequest,
): Promise<Pin> {
  checkKey(key)
  // One unit: what the reads decide (replace or create, under the limit) is what is written,
  // even with another instance putting the same key at once (on Postgres `pin` locks the
  // person's row until the unit commits; on SQLite units run one at a time). The writes below
  // join it.
  return await ctx.writes.apply(async (tx) => {
    const existing = await tx.store.messages.pin(channel.id, key)
    if (existing) return toPin(await replaceRow(ctx, channel, existing, req.body))
    if ((await tx.store.messages.countPins(channel.id)) >= LIMITS.pinsPerChannel) {
      throw fail.conflict(`this channel has ${LIMITS.pinsPerChannel} pins, the most it can hold`)
    }
    return toPin(await sendMessage(ctx, channel, 'agent', req, key))
  })
}

export const patchPin = async (
  ctx: Ctx,
  channel: ChannelRow,
  key: string,
  req: EditRequest,
): Promise<Pin> => toPin(await editRow(ctx, channel, await findPin(ctx, channel, key), req))

export async function deletePin(ctx: Ctx, channel: ChannelRow, key: string): Promise<void> {
  await deleteRow(ctx, await findPin(ctx, channel, key))
}

export const listPins = async (ctx: Ctx, channel: ChannelRow): Promise<Pin[]> =>
  (await ctx.store.messages.pins(channel.id)).map(toPin)
