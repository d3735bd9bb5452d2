import { createHash } from 'node:crypto'
import type { Ctx, Tx } from '../../../core/context.ts'
import { approvalLine } from '../../../shared/approval-text.ts'
import { canonicalJson } from '../../../shared/canonical.ts'
import type { AnswerProof } from '../../../shared/proof.ts'
import type { MessageDeleted } from '../../events.ts'
import type { Block, MessageBody } from '../../schema.ts'
import type { MessageRow } from '../../store.ts'
import type { Answerer, AskSettled } from '../events.ts'
import type { AuditRow } from './store.ts'

/**
 * The approval audit trail (PRODUCT.md "Trusted answers"): every decision on a question that
 * carries a request hash (approvals, and questions asked with proof) is appended, in the
 * transaction that settles it, to a hash-chained log: who, by which passkey or device, what was
 * decided about which action, when. The chain shows a row changed, dropped or slipped in later;
 * the signatures in it are checked with the passkeys' keys (`hark admin audit verify`).
 */
export interface AuditEntry {
  at: number
  user_id: string
  channel_id: string
  message_id: string
  request_hash: string
  tool?: string
  /**
   * `deleted`: the agent deleted the message; `was` says what it was then (`open`: withdrawn
   * unanswered; else its decision's own entry stays before this one).
   */
  status: 'answered' | 'expired' | 'cancelled' | 'deleted'
  was?: 'open' | 'answered' | 'expired' | 'cancelled'
  /** What the person was shown, as sent (the body is fixed once sent: messages/service.ts). */
  title?: string
  text?: string
  /** The action in a line: the approval's `summary`, else its tool and input's line. */
  summary?: string
  answer?: unknown
  /** Who settled it: the person (by passkey, or unsigned from a session or a token), the agent, or the server's expiry. */
  by: 'passkey' | 'session' | 'person-token' | 'notification' | 'agent' | 'server'
  credential_id?: string
  /** The browser (its user agent) or the token's label. */
  device?: string
  reason?: string
  proof?: AnswerProof
}

export const chainHash = (prevHash: string, entry: string) =>
  createHash('sha256').update(`${prevHash}\n${entry}`).digest('hex')

/** A question was settled (`ask.settled`, in its unit): its decision goes on the record. */
export async function auditSettled(tx: Tx, event: AskSettled): Promise<void> {
  const row = event.message
  if (row.ask_request_hash === null) return
  const owner = (await tx.store.channels.byId(row.channel_id))?.user_id
  if (owner) await appendDecision(tx, row, owner, event.by)
}

/**
 * A message was deleted (`message.deleted`, in its unit): an approval's deletion is on the
 * record, withdrawn if it was open, and the history's line for its decision (the log's, not
 * the message's) stays.
 */
export async function auditDeleted(tx: Tx, event: MessageDeleted): Promise<void> {
  const row = event.message
  if (row.ask_request_hash === null) return
  const owner = (await tx.store.channels.byId(row.channel_id))?.user_id
  if (owner) await appendDeletion(tx, row, owner, event.at)
}

/** Appends the decision on `row` (already settled); call inside the settling transaction. */
export async function appendDecision(
  tx: Tx,
  row: MessageRow,
  userId: string,
  answerer: Answerer | 'agent' | 'server',
): Promise<AuditRow | undefined> {
  if (row.ask_request_hash === null || row.ask_status === 'open' || row.ask_status === null) {
    return undefined
  }
  const entry: AuditEntry = {
    ...asked(row, row.ask_request_hash, userId),
    status: row.ask_status,
    by: typeof answerer === 'string' ? answerer : answerer.proof ? 'passkey' : answerer.via,
  }
  if (row.answer !== null) entry.answer = JSON.parse(row.answer)
  if (row.ask_reason !== null) entry.reason = row.ask_reason
  if (typeof answerer !== 'string') {
    if (answerer.device) entry.device = answerer.device
    if (answerer.proof) {
      entry.credential_id = answerer.proof.credential_id
      entry.proof = answerer.proof
    }
  }
  return await append(tx, entry)
}

/**
 * Appends the deletion of an audited question (`row` as it was before, `at` when deleted); call
 * inside the deleting transaction. An open one is withdrawn by it; an answered one keeps its
 * decision's entry, and the history says the message went.
 */
export async function appendDeletion(
  tx: Tx,
  row: MessageRow,
  userId: string,
  at: number,
): Promise<AuditRow | undefined> {
  if (row.ask_request_hash === null || row.ask_status === null) return undefined
  return await append(tx, {
    ...asked(row, row.ask_request_hash, userId),
    at,
    status: 'deleted',
    was: row.ask_status,
    by: 'agent',
  })
}

/** Who asked what: the entry's fields every kind shares, read from the body as sent. */
function asked(row: MessageRow, requestHash: string, userId: string) {
  const body = JSON.parse(row.body as string) as MessageBody
  const approval = body.blocks?.find((b: Block) => b.type === 'approval')
  const shown: Pick<AuditEntry, 'tool' | 'title' | 'text' | 'summary'> = {}
  if (typeof approval?.tool === 'string') shown.tool = approval.tool
  if (body.title !== undefined) shown.title = body.title
  if (body.text !== undefined) shown.text = body.text
  const summary = summaryOf(body)
  if (summary !== undefined) shown.summary = summary
  return {
    at: row.updated_at,
    user_id: userId,
    channel_id: row.channel_id,
    message_id: row.id,
    request_hash: requestHash,
    ...shown,
  }
}

async function append(tx: Tx, entry: AuditEntry): Promise<AuditRow> {
  const text = canonicalJson(entry)
  const prev = await tx.store.audit.lastHash()
  return await tx.store.audit.insert({
    at: entry.at,
    user_id: entry.user_id,
    channel_id: entry.channel_id,
    message_id: entry.message_id,
    entry: text,
    prev_hash: prev,
    hash: chainHash(prev, text),
  })
}

/**
 * A channel's decisions, newest first, for the app's history: as the log recorded them, never
 * the message as it reads now. The text the person saw stays in the log (`hark admin audit
 * export`), out of the page: it may be long. An entry written before the log kept the summary
 * (schema 9's first entries) takes it from the message's approval block, whose action and
 * summary never could change; a question's title could, so it gets none.
 */
export async function channelHistory(ctx: Ctx, channelId: string, before: number, limit: number) {
  const out = []
  for (const r of await ctx.store.audit.byChannel(channelId, before, limit)) {
    const { text: _text, ...entry } = JSON.parse(r.entry) as AuditEntry
    const summary = entry.summary ?? (await approvalSummaryNow(ctx, r.message_id))
    out.push({ seq: r.seq, hash: r.hash, ...entry, ...(summary === undefined ? {} : { summary }) })
  }
  return out
}

/** What the action was, in a line: the approval's summary or line, else the question's title. */
function summaryOf(body: MessageBody): string | undefined {
  const approval = body.blocks?.find((b) => b.type === 'approval')
  if (!approval) return body.title ?? body.text?.slice(0, 200)
  if (typeof approval.summary === 'string') return approval.summary
  return approvalLine(approval.tool as string, approval.input)
}

async function approvalSummaryNow(ctx: Ctx, messageId: string): Promise<string | undefined> {
  const row = await ctx.store.messages.byId(messageId)
  if (!row || row.body === null) return undefined
  const body = JSON.parse(row.body) as MessageBody
  return body.blocks?.some((b) => b.type === 'approval') ? summaryOf(body) : undefined
}
