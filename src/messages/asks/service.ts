import type { ChannelRow } from '../../channels/store.ts'
import type { Ctx } from '../../core/context.ts'
import { fail, HarkError } from '../../core/errors.ts'
import { type Abortable, askKey, waitWhilePending } from '../../core/waiters.ts'
import { messageOf } from '../records.ts'
import { announce, findMessage } from '../rows.ts'
import type { Message, MessageBody } from '../schema.ts'
import type { MessageRow } from '../store.ts'
import { defaultsAnswer, validateAnswer } from './answers.ts'
import type { Answerer } from './events.ts'
import { checkProof } from './proof.ts'

export interface AskResult {
  message: Message
  answer: unknown
}

export const askResult = (row: MessageRow): AskResult => ({
  message: messageOf(row),
  answer: row.answer === null ? null : JSON.parse(row.answer),
})

/** A question of this channel, or 404. An overdue one is expired on the spot. */
export async function findQuestion(ctx: Ctx, channel: ChannelRow, id: string): Promise<MessageRow> {
  const row = await findMessage(ctx, channel, id)
  if (row.ask_status === null) throw fail.notFound('question')
  return await expireIfDue(ctx, row)
}

/** The question and its answer; with `waitMs`, held until it is no longer open. */
export async function readAsk(
  ctx: Ctx,
  channel: ChannelRow,
  id: string,
  waitMs: number,
  signal?: Abortable,
): Promise<AskResult> {
  let row = await findQuestion(ctx, channel, id)
  if (row.ask_status === 'open' && waitMs > 0) {
    const reread = async () => {
      const latest = await ctx.store.messages.byId(id)
      if (!latest || latest.deleted_at !== null) throw fail.notFound('question')
      return latest
    }
    const isOpen = (r: MessageRow) => r.ask_status === 'open'
    const { settled, last } = await waitWhilePending(
      ctx.waiters,
      askKey(id),
      waitMs,
      signal,
      row,
      reread,
      isOpen,
    )
    // On shutdown the database may already be closed: answer with the last state read.
    row = settled ?? (ctx.waiters.isClosed ? last : await findQuestion(ctx, channel, id))
  }
  return askResult(row)
}

export const listOpenAsks = async (ctx: Ctx, channel: ChannelRow): Promise<Message[]> =>
  await stillOpen(ctx, await ctx.store.messages.openAsks(channel.id))

/** The questions that are still open once the overdue ones are expired, one after another. */
async function stillOpen(ctx: Ctx, rows: MessageRow[]): Promise<Message[]> {
  const out: Message[] = []
  for (const r of rows) {
    const m = messageOf(await expireIfDue(ctx, r))
    if (m.ask?.status === 'open') out.push(m)
  }
  return out
}

/** Most questions one list answers with; a person with more has bigger problems than paging. */
const OPEN_ASKS_MAX = 500

/**
 * The person's open questions across all their channels, oldest first (what waits longest
 * first); `kind` narrows to approvals.
 */
export async function listPersonAsks(
  ctx: Ctx,
  userId: string,
  kind?: 'approval',
): Promise<Message[]> {
  const rows = await ctx.store.messages.openAsksOfUser(userId, OPEN_ASKS_MAX)
  return await stillOpen(
    ctx,
    rows.filter((r) => !kind || r.ask_request_hash !== null),
  )
}

/** The agent withdraws its question; `reason` (e.g. "answered in the terminal") is shown to the person. */
export async function cancelAsk(
  ctx: Ctx,
  channel: ChannelRow,
  id: string,
  reason?: string,
): Promise<MessageRow> {
  const row = await findQuestion(ctx, channel, id)
  if (row.ask_status !== 'open') throw fail.conflict(`the question is already ${row.ask_status}`)
  return await settle(ctx, row, 'cancelled', null, 'agent', reason ?? null)
}

/**
 * The person answers (from the app or a person token): validated, stored once, announced. A
 * signed answer (`answerer.proof`) is checked before anything is written.
 */
export async function answerAsk(
  ctx: Ctx,
  channel: ChannelRow,
  id: string,
  answer: unknown,
  answerer: Answerer = { via: 'person-token' },
): Promise<AskResult> {
  const row = await findQuestion(ctx, channel, id)
  if (row.ask_status !== 'open') throw fail.conflict(`the question is already ${row.ask_status}`)
  const value = validateAnswer(JSON.parse(row.body as string) as MessageBody, answer)
  if (answerer.proof) {
    await checkProof(ctx, channel, row, value, answerer.proof)
    // Checked across an await: it may have been answered, cancelled or expired meanwhile.
    const now = await findQuestion(ctx, channel, id)
    if (now.ask_status !== 'open') throw fail.conflict(`the question is already ${now.ask_status}`)
  }
  return askResult(await settle(ctx, row, 'answered', value, answerer))
}

export async function settle(
  ctx: Ctx,
  row: MessageRow,
  status: 'answered' | 'expired' | 'cancelled',
  answer: unknown,
  by: Answerer | 'agent' | 'server',
  reason: string | null = null,
): Promise<MessageRow> {
  const now = ctx.clock.now()
  const proof = typeof by === 'object' && by.proof ? JSON.stringify(by.proof) : null
  return await ctx.writes.apply(async (tx) => {
    const settled = await tx.store.messages.setAsk(
      row.rid,
      {
        status,
        answer: status === 'cancelled' ? null : JSON.stringify(answer),
        answeredAt: status === 'answered' ? now : null,
        reason,
        proof,
      },
      now,
    )
    // Settled meanwhile (the callers checked, but on several instances another may have won):
    // the unit is rolled back, the change number with it.
    if (!settled) throw new AlreadySettled((await tx.store.messages.byId(row.id)) ?? row)
    await tx.emit({ type: 'ask.settled', message: settled, by })
    await announce(tx, settled)
    return settled
  })
}

/** A question that was no longer open when its settlement was written: a 409 for its callers. */
class AlreadySettled extends HarkError {
  constructor(readonly row: MessageRow) {
    super(409, `the question is already ${row.ask_status ?? 'gone'}`)
  }
}

/**
 * Expires a question whose time has come, answering it with its inputs' defaults. Settled
 * meanwhile by someone else, it is answered as it now is.
 */
export async function expireIfDue(ctx: Ctx, row: MessageRow): Promise<MessageRow> {
  if (row.ask_status !== 'open' || row.ask_expires_at === null) return row
  if (row.ask_expires_at > ctx.clock.now()) return row
  try {
    return await settle(
      ctx,
      row,
      'expired',
      defaultsAnswer(JSON.parse(row.body as string) as MessageBody),
      'server',
    )
  } catch (error) {
    if (error instanceof AlreadySettled) return error.row
    throw error
  }
}

/** Expires every overdue question; returns how many. */
export async function expireDue(ctx: Ctx): Promise<number> {
  let total = 0
  for (;;) {
    const due = await ctx.store.messages.expiredBy(ctx.clock.now())
    for (const row of due) await expireIfDue(ctx, row)
    total += due.length
    if (due.length < 500) return total
  }
}
