import { createHash } from 'node:crypto'
import type { Block, MessageBody } from '../../messages/schema.ts'
import type { MessageRow } from '../../messages/store.ts'
import type { Ctx, Tx } from '../../server/context.ts'
import { approvalLine } from '../../shared/approval-text.ts'
import { canonicalJson } from '../../shared/canonical.ts'
import type { AnswerProof } from '../../shared/proof.ts'
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
  status: 'answered' | 'expired' | 'cancelled'
  answer?: unknown
  /** Who settled it: the person (by passkey, or unsigned from a session or a token), the agent, or the server's expiry. */
  by: 'passkey' | 'session' | 'person-token' | 'notification' | 'agent' | 'server'
  credential_id?: string
  /** The browser (its user agent) or the token's label. */
  device?: string
  reason?: string
  proof?: AnswerProof
}

/** Who answered, as the answer route knows it. */
export interface Answerer {
  via: 'session' | 'person-token' | 'notification'
  device?: string
  proof?: AnswerProof
}

export const chainHash = (prevHash: string, entry: string) =>
  createHash('sha256').update(`${prevHash}\n${entry}`).digest('hex')

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
  const body = JSON.parse(row.body as string) as MessageBody
  const tool = body.blocks?.find((b: Block) => b.type === 'approval')?.tool
  const entry: AuditEntry = {
    at: row.updated_at,
    user_id: userId,
    channel_id: row.channel_id,
    message_id: row.id,
    request_hash: row.ask_request_hash,
    status: row.ask_status,
    by: typeof answerer === 'string' ? answerer : answerer.proof ? 'passkey' : answerer.via,
  }
  if (typeof tool === 'string') entry.tool = tool
  if (row.answer !== null) entry.answer = JSON.parse(row.answer)
  if (row.ask_reason !== null) entry.reason = row.ask_reason
  if (typeof answerer !== 'string') {
    if (answerer.device) entry.device = answerer.device
    if (answerer.proof) {
      entry.credential_id = answerer.proof.credential_id
      entry.proof = answerer.proof
    }
  }
  const text = canonicalJson(entry)
  const prev = await tx.store.audit.lastHash()
  return await tx.store.audit.insert({
    at: entry.at,
    user_id: userId,
    channel_id: row.channel_id,
    message_id: row.id,
    entry: text,
    prev_hash: prev,
    hash: chainHash(prev, text),
  })
}

/** A channel's decisions, newest first, for the app's history. */
export async function channelHistory(ctx: Ctx, channelId: string, before: number, limit: number) {
  const out = []
  for (const r of await ctx.store.audit.byChannel(channelId, before, limit)) {
    const entry = JSON.parse(r.entry) as AuditEntry
    out.push({ seq: r.seq, hash: r.hash, ...entry, summary: await summaryOf(ctx, r.message_id) })
  }
  return out
}

/**
 * What the action was, in a line, read from the message (not kept in the log, which holds the
 * request hash): its summary, else the line the app would show. Gone once the message is.
 */
async function summaryOf(ctx: Ctx, messageId: string): Promise<string | undefined> {
  const row = await ctx.store.messages.byId(messageId)
  if (!row || row.body === null) return undefined
  const body = JSON.parse(row.body) as MessageBody
  const approval = body.blocks?.find((b) => b.type === 'approval')
  if (!approval) return body.title ?? body.text?.slice(0, 200)
  if (typeof approval.summary === 'string') return approval.summary
  return approvalLine(approval.tool as string, approval.input)
}
