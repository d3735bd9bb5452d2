import type { ChannelRow } from '../channels/store.ts'
import { fail, HarkError } from '../core/errors.ts'
import { type Abortable, askKey, waitWhilePending } from '../core/waiters.ts'
import type { Message, MessageBody } from '../messages/schema.ts'
import { announce, findMessage, messageOf } from '../messages/service.ts'
import type { MessageRow } from '../messages/store.ts'
import type { Ctx } from '../server/context.ts'
import { defaultsAnswer, validateAnswer } from './answers.ts'
import { type Answerer, appendDecision } from './audit/service.ts'
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
function findQuestion(ctx: Ctx, channel: ChannelRow, id: string): MessageRow {
  const row = findMessage(ctx, channel, id)
  if (row.ask_status === null) throw fail.notFound('question')
  return expireIfDue(ctx, row)
}

/** The question and its answer; with `waitMs`, held until it is no longer open. */
export async function readAsk(
  ctx: Ctx,
  channel: ChannelRow,
  id: string,
  waitMs: number,
  signal?: Abortable,
): Promise<AskResult> {
  let row = findQuestion(ctx, channel, id)
  if (row.ask_status === 'open' && waitMs > 0) {
    const reread = () => {
      const latest = ctx.store.messages.byId(id)
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
    row = settled ?? (ctx.waiters.isClosed ? last : findQuestion(ctx, channel, id))
  }
  return askResult(row)
}

export const listOpenAsks = (ctx: Ctx, channel: ChannelRow): Message[] =>
  ctx.store.messages
    .openAsks(channel.id)
    .map((r) => messageOf(expireIfDue(ctx, r)))
    .filter((m) => m.ask?.status === 'open')

/** Most questions one list answers with; a person with more has bigger problems than paging. */
const OPEN_ASKS_MAX = 500

/**
 * The person's open questions across all their channels, oldest first (what waits longest
 * first); `kind` narrows to approvals.
 */
export function listPersonAsks(ctx: Ctx, userId: string, kind?: 'approval'): Message[] {
  return ctx.store.messages
    .openAsksOfUser(userId, OPEN_ASKS_MAX)
    .filter((r) => !kind || r.ask_request_hash !== null)
    .map((r) => messageOf(expireIfDue(ctx, r)))
    .filter((m) => m.ask?.status === 'open')
}

/** The agent withdraws its question; `reason` (e.g. "answered in the terminal") is shown to the person. */
export function cancelAsk(ctx: Ctx, channel: ChannelRow, id: string, reason?: string): MessageRow {
  const row = findQuestion(ctx, channel, id)
  if (row.ask_status !== 'open') throw fail.conflict(`the question is already ${row.ask_status}`)
  return settle(ctx, row, 'cancelled', null, 'agent', reason ?? null)
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
  const row = findQuestion(ctx, channel, id)
  if (row.ask_status !== 'open') throw fail.conflict(`the question is already ${row.ask_status}`)
  const value = validateAnswer(JSON.parse(row.body as string) as MessageBody, answer)
  if (answerer.proof) {
    await checkProof(ctx, channel, row, value, answerer.proof)
    // Checked across an await: it may have been answered, cancelled or expired meanwhile.
    const now = findQuestion(ctx, channel, id)
    if (now.ask_status !== 'open') throw fail.conflict(`the question is already ${now.ask_status}`)
  }
  return askResult(settle(ctx, row, 'answered', value, answerer))
}

function settle(
  ctx: Ctx,
  row: MessageRow,
  status: 'answered' | 'expired' | 'cancelled',
  answer: unknown,
  by: Answerer | 'agent' | 'server',
  reason: string | null = null,
): MessageRow {
  const now = ctx.clock.now()
  const proof = typeof by === 'object' && by.proof ? JSON.stringify(by.proof) : null
  return ctx.writes.apply((tx) => {
    const settled = ctx.store.messages.setAsk(
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
    if (!settled) throw new AlreadySettled(ctx.store.messages.byId(row.id) ?? row)
    const owner = ctx.store.channels.byId(row.channel_id)?.user_id
    if (owner) appendDecision(ctx, settled, owner, by)
    announce(ctx, tx, settled)
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
export function expireIfDue(ctx: Ctx, row: MessageRow): MessageRow {
  if (row.ask_status !== 'open' || row.ask_expires_at === null) return row
  if (row.ask_expires_at > ctx.clock.now()) return row
  try {
    return settle(
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
export function expireDue(ctx: Ctx): number {
  let total = 0
  for (;;) {
    const due = ctx.store.messages.expiredBy(ctx.clock.now())
    for (const row of due) expireIfDue(ctx, row)
    total += due.length
    if (due.length < 500) return total
  }
}
