import { personBatch } from '../access/idempotency/service.ts'
import type { ChannelRow } from '../channels/store.ts'
import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { newMessageId } from '../core/ids.ts'
import { approvalOf, requestHashOf } from './asks/approval.ts'
import { expireIfDue } from './asks/service.ts'
import { type BlockRules, inputBlocks, validateBody } from './blocks.ts'
import { announce, findMessage } from './rows.ts'
import type { AckState, Block, EditRequest, MessageBody, SendRequest } from './schema.ts'
import type { MessageRow } from './store.ts'

export type Sender = 'agent' | 'human'

/**
 * The rules `body`'s blocks are checked by. The files they name are looked up here, first:
 * the check itself is synchronous.
 */
export async function blockRules(
  ctx: Ctx,
  channel: ChannelRow,
  body: MessageBody,
  field: string,
  inputs: BlockRules['inputs'] = 'allowed',
): Promise<BlockRules> {
  const inChannel = new Set<string>()
  for (const block of body.blocks ?? []) {
    const id = (block as Block).file_id
    if (typeof id !== 'string' || inChannel.has(id)) continue
    if (await ctx.store.files.inChannel(id, channel.id)) inChannel.add(id)
  }
  return { field, inputs, fileInChannel: (id) => inChannel.has(id) }
}

const HUMAN_INPUTS = "the person's messages cannot hold input blocks"
export const PIN_INPUTS = 'pins cannot hold input blocks; send a question as a message'

function requireContent(body: MessageBody, field: string): void {
  if (!body.text && !body.title && !(body.blocks && body.blocks.length > 0)) {
    throw fail.invalid(field, 'needs a text, a title or at least one block')
  }
}

/** Sends a message into a channel: the agent's (maybe a question, maybe a pin) or the person's. */
export async function sendMessage(
  ctx: Ctx,
  channel: ChannelRow,
  sender: Sender,
  req: SendRequest,
  pinKey: string | null = null,
): Promise<MessageRow> {
  const inputsRule = sender === 'human' ? HUMAN_INPUTS : pinKey ? PIN_INPUTS : 'allowed'
  validateBody(req.body, await blockRules(ctx, channel, req.body, 'body.blocks', inputsRule))
  requireContent(req.body, 'body')
  const isQuestion = inputBlocks(req.body).length > 0
  if (req.proof === true && !isQuestion) {
    throw fail.invalid(
      'proof',
      'only questions (messages with input blocks) are answered with proof',
    )
  }
  if (req.expires_in !== undefined && !isQuestion) {
    throw fail.invalid('expires_in', 'only questions (messages with input blocks) expire')
  }
  const now = ctx.clock.now()
  const expiresAt = req.expires_in === undefined ? null : now + Math.round(req.expires_in * 1000)
  return await ctx.writes.apply(async (tx) => {
    const message = {
      id: newMessageId(now),
      channel_id: channel.id,
      sender,
      body: JSON.stringify(req.body),
      silent: req.silent === true,
      pin_key: pinKey,
      ask_status: isQuestion ? ('open' as const) : null,
      ask_expires_at: expiresAt,
      ask_request_hash: isQuestion ? requestHashOf(req.body, req.proof === true) : null,
      created_at: now,
    }
    // Emitted as the insert is sent, in the same transaction: a message that exists has its
    // reactions' writes (its pushes queued), even after a crash, and one that does not has
    // none. Their reads go down the connection with the insert, after it (on Postgres one round
    // trip fewer while the person's row is locked: docs/decisions.md, "One person's sends on
    // Postgres"; the insert first, so the person's row lock comes before any other, as before).
    const [inserted] = await Promise.all([
      tx.store.messages.insert(message),
      tx.emit({ type: 'message.created', channel, message }),
    ])
    if (expiresAt !== null) tx.after(() => ctx.expiry.noteExpiry(ctx, expiresAt))
    // The channel exists: the insert would have failed without it (a foreign key).
    await announce(tx, inserted, channel.user_id)
    return inserted
  }, personBatch(channel))
}

async function findAgentMessage(ctx: Ctx, channel: ChannelRow, id: string): Promise<MessageRow> {
  const row = await findMessage(ctx, channel, id)
  if (row.sender !== 'agent') throw fail.forbidden("the person's messages cannot be changed")
  // The server writes the message that shows a secret request; the agent must not turn it
  // into something else ("paste your token here") nor hide it. It withdraws the request instead.
  if (showsSecretRequest(row)) {
    throw fail.forbidden(
      'this message shows a secret request; withdraw it with DELETE /v1/secrets/:id instead',
    )
  }
  return row
}

const showsSecretRequest = (row: MessageRow) =>
  ((JSON.parse(row.body as string) as MessageBody).blocks ?? []).some(
    (b) => b.type === 'secret_request',
  )

type Patches = NonNullable<EditRequest['block_patches']>

function applyPatches(blocks: Block[], patches: Patches): Block[] {
  const out = blocks.map((b) => ({ ...b }))
  const entries: [string, Record<string, unknown>, string][] = Array.isArray(patches)
    ? patches.map((p, i) => [p.id, p, `block_patches[${i}].id`])
    : Object.entries(patches).map(([id, p]) => [id, p, `block_patches.${id}`])
  for (const [id, patch, field] of entries) {
    const index = out.findIndex((b) => b.id === id)
    if (index === -1) throw fail.invalid(field, `no block with id "${id}" in this message`)
    out[index] = { ...(out[index] as Block), ...patch, id }
  }
  return out
}

/** The body after a PATCH: title/text replaced (null removes), blocks replaced, then patched. */
export function editedBody(current: MessageBody, req: EditRequest): MessageBody {
  if (
    req.title === undefined &&
    req.text === undefined &&
    req.blocks === undefined &&
    req.block_patches === undefined
  ) {
    throw fail.badRequest('nothing to change: give title, text, blocks or block_patches')
  }
  const next: MessageBody = { ...current }
  if (req.title !== undefined) {
    if (req.title === null) delete next.title
    else next.title = req.title
  }
  if (req.text !== undefined) {
    if (req.text === null) delete next.text
    else next.text = req.text
  }
  if (req.blocks !== undefined) next.blocks = req.blocks
  if (req.block_patches !== undefined) {
    next.blocks = applyPatches((next.blocks ?? []) as Block[], req.block_patches)
  }
  return next
}

/**
 * Writes a new body to an agent message, keeping a question's inputs fixed once it is no
 * longer open (409) and never turning a message into a question or back (400). `nextOf` makes
 * the body from the row as the change finds it: read inside the change's unit (`forChange`:
 * on Postgres after the person's lock), so an edit never works on a row another instance has
 * changed or deleted since it was looked up (a block patch on a stale body, a deleted message
 * given its body back, an answered question's inputs changed).
 */
async function changeBody(
  ctx: Ctx,
  channel: ChannelRow,
  given: MessageRow,
  nextOf: (row: MessageRow) => MessageBody,
  field: string,
): Promise<MessageRow> {
  // An overdue question is expired first (in its own unit, kept whatever this edit's fate), as
  // reading or cancelling it would: its inputs must not change after its time is up just
  // because the expiry timer has not run yet.
  await expireIfDue(ctx, given)
  return await ctx.writes.apply(async (tx) => {
    const row = await tx.store.messages.forChange(given.id)
    if (!row || row.deleted_at !== null || row.channel_id !== given.channel_id) {
      throw fail.notFound(given.pin_key === null ? 'message' : 'pin')
    }
    const next = nextOf(row)
    validateBody(
      next,
      await blockRules(ctx, channel, next, field, row.pin_key ? PIN_INPUTS : 'allowed'),
    )
    requireContent(next, field === 'blocks' ? 'body' : field.replace(/\.blocks$/, ''))
    const before = inputBlocks(JSON.parse(row.body as string) as MessageBody)
    const after = inputBlocks(next)
    if (row.ask_status !== null) {
      // What the person approves must be what was asked: an approval's action (and whether a
      // question is one) never changes, open or not; `request_hash` was fixed when it was asked.
      const wasApproval = approvalOf({ blocks: before }) !== undefined
      if (wasApproval !== (approvalOf({ blocks: after }) !== undefined)) {
        throw fail.invalid(field, 'a question cannot become an approval, nor stop being one')
      }
      if (wasApproval && !Bun.deepEquals(before, after, true)) {
        throw fail.conflict("an approval's action cannot change; cancel it and ask again")
      }
      // Compared as values, not as JSON text: the same inputs sent back with their keys in
      // another order are unchanged.
      if (!Bun.deepEquals(before, after, true) && row.ask_status !== 'open') {
        throw fail.conflict(`the question is ${row.ask_status}; its inputs can no longer change`)
      }
      if (after.length === 0)
        throw fail.invalid(field, 'a question must keep at least one input block')
      // What the person decides on is what they were shown: an approval's (or a signed
      // question's) title, text and every block stay as sent, open or not, and the audit
      // records them at the decision. Compared as values: the same body sent again is no change.
      if (
        row.ask_request_hash !== null &&
        !Bun.deepEquals(JSON.parse(row.body as string), next, true)
      ) {
        throw fail.conflict(
          'an approval (or a question asked with proof) cannot change once sent: not its title, text nor any block; cancel it and ask again',
        )
      }
    } else if (after.length > 0) {
      throw fail.invalid(field, 'input blocks can only be sent in a new message (a question)')
    }
    const updated = await tx.store.messages.setBody(row.rid, JSON.stringify(next), ctx.clock.now())
    await announce(tx, updated, channel.user_id)
    return updated
  })
}

export async function editMessage(ctx: Ctx, channel: ChannelRow, id: string, req: EditRequest) {
  const row = await findAgentMessage(ctx, channel, id)
  return await editRow(ctx, channel, row, req)
}

export async function editRow(ctx: Ctx, channel: ChannelRow, row: MessageRow, req: EditRequest) {
  const edit = (current: MessageRow) =>
    editedBody(JSON.parse(current.body as string) as MessageBody, req)
  return await changeBody(ctx, channel, row, edit, 'blocks')
}

export async function replaceMessage(ctx: Ctx, channel: ChannelRow, id: string, body: MessageBody) {
  return await changeBody(
    ctx,
    channel,
    await findAgentMessage(ctx, channel, id),
    () => body,
    'body.blocks',
  )
}

export async function replaceRow(
  ctx: Ctx,
  channel: ChannelRow,
  row: MessageRow,
  body: MessageBody,
) {
  return await changeBody(ctx, channel, row, () => body, 'body.blocks')
}

export async function deleteRow(ctx: Ctx, row: MessageRow): Promise<void> {
  await ctx.writes.apply(async (tx) => {
    // As the delete finds it (`forChange`): deleted meanwhile (through another instance) is
    // the 404 it would have been a moment later, not a second deletion.
    const current = await tx.store.messages.forChange(row.id)
    if (!current || current.deleted_at !== null) {
      throw fail.notFound(row.pin_key === null ? 'message' : 'pin')
    }
    const deleted = await tx.store.messages.markDeleted(current.rid, ctx.clock.now())
    await tx.emit({ type: 'message.deleted', message: current, at: deleted.updated_at })
    await announce(tx, deleted)
  })
}

export async function deleteMessage(ctx: Ctx, channel: ChannelRow, id: string): Promise<void> {
  await deleteRow(ctx, await findAgentMessage(ctx, channel, id))
}

/** The agent acknowledges one of the person's messages: seen, working or done, in any order. */
export async function setMessageState(
  ctx: Ctx,
  channel: ChannelRow,
  id: string,
  state: AckState,
): Promise<MessageRow> {
  const row = await findMessage(ctx, channel, id)
  if (row.sender !== 'human') {
    throw fail.invalid('state', "only the person's messages carry a state")
  }
  if (row.state === state) return row
  return await ctx.writes.apply(async (tx) => {
    const updated = await tx.store.messages.setState(row.rid, state, ctx.clock.now())
    await announce(tx, updated)
    return updated
  })
}
