import { createHash } from 'node:crypto'
import type { Static } from '@sinclair/typebox'
import type { ChannelRow } from '../../../channels/store.ts'
import type { Ctx } from '../../../core/context.ts'
import { fail } from '../../../core/errors.ts'
import { newId, newMessageId } from '../../../core/ids.ts'
import { type Abortable, waitWhilePending } from '../../../core/waiters.ts'
import { secretRequest } from '../../../shared/canonical.ts'
import { type AnswerProof, secretDecision } from '../../../shared/proof.ts'
import {
  CIPHERTEXT_PATTERN,
  fingerprint,
  importPublicKey,
  MAX_CIPHERTEXT_CHARS,
} from '../../../shared/secret-crypto.ts'
import { announce } from '../../rows.ts'
import type { Block, MessageBody } from '../../schema.ts'
import type { MessageRow } from '../../store.ts'
import { checkClaim } from '../proof.ts'
import type { SecretRequest } from './schema.ts'
import type { SecretRow, SecretStatus } from './store.ts'

export type SecretRecord = Static<typeof SecretRequest>

/** An agent polling one request parks here; every transition wakes it. */
export const secretKey = (id: string) => `secret:${id}`

export function secretOf(row: SecretRow): SecretRecord {
  const record: SecretRecord = {
    id: row.id,
    channel_id: row.channel_id,
    message_id: row.message_id,
    name: row.name,
    public_key: row.public_key,
    fingerprint: row.fingerprint,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
  }
  if (row.description !== null) record.description = row.description
  return record
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const CONTROL = /[\u0000-\u001f\u007f]/

/** The thread message's block: what the app renders (it re-derives the fingerprint itself). */
const blockOf = (row: Pick<SecretRow, 'id' | 'name' | 'fingerprint' | 'status'>): Block => ({
  type: 'secret_request',
  id: 'secret',
  request_id: row.id,
  name: row.name,
  fingerprint: row.fingerprint,
  status: row.status,
})

/** A secret request that passed its checks, with its key's fingerprint, ready to record. */
export interface CheckedSecret {
  name: string
  description: string | null
  public_key: string
  fingerprint: string
}

/** Checks a secret request (its key is imported, which awaits); writes nothing. */
export async function checkSecret(req: {
  name: string
  description?: string
  public_key: string
}): Promise<CheckedSecret> {
  const name = req.name.trim()
  if (name === '' || CONTROL.test(name)) {
    throw fail.invalid('name', 'must be 1 to 100 characters without control characters')
  }
  const description = req.description?.trim() || null
  try {
    await importPublicKey(req.public_key)
  } catch {
    throw fail.invalid('public_key', 'must be base64url of a raw uncompressed P-256 public key')
  }
  return {
    name,
    description,
    public_key: req.public_key,
    fingerprint: await fingerprint(req.public_key),
  }
}

/**
 * The agent asks for a secret. The request and the thread message that shows it are written in
 * one transaction; the message is made here, not by `sendMessage`, because agents may not send
 * `secret_request` blocks themselves. Synchronous (the checks that await come first, in
 * `checkSecret`), so a retry-safe route can run it inside its own transaction.
 */
export async function recordSecret(
  ctx: Ctx,
  channel: ChannelRow,
  checked: CheckedSecret,
): Promise<SecretRow> {
  const { name, description, fingerprint: print } = checked
  const id = newId('sec')
  const now = ctx.clock.now()
  const body: MessageBody = {
    ...(description ? { text: description } : {}),
    blocks: [blockOf({ id, name, fingerprint: print, status: 'pending' })],
  }
  return await ctx.writes.apply(async (tx) => {
    const message = await tx.store.messages.insert({
      id: newMessageId(now),
      channel_id: channel.id,
      sender: 'agent',
      body: JSON.stringify(body),
      silent: false,
      pin_key: null,
      ask_status: null,
      ask_expires_at: null,
      ask_request_hash: null,
      created_at: now,
    })
    const secret = await tx.store.secrets.insert({
      id,
      channel_id: channel.id,
      message_id: message.id,
      name,
      description,
      public_key: checked.public_key,
      fingerprint: print,
      created_at: now,
    })
    // A secret request waits on the person: tell their devices, like any message.
    await tx.emit({ type: 'message.created', channel, message })
    await announce(tx, message)
    return secret
  })
}

/**
 * Moves a request to `status` (the ciphertext exists only while `fulfilled`), keeps the thread
 * message's block in step so the app's feed shows it, and wakes the agent's poll.
 */
async function transition(
  ctx: Ctx,
  row: SecretRow,
  status: SecretStatus,
  ciphertext: string | null,
  proof: string | null = null,
): Promise<SecretRow> {
  const now = ctx.clock.now()
  return await ctx.writes.apply(async (tx) => {
    // From the status the caller checked: one that changed since (another instance's
    // request, once on Postgres) is a conflict, never a second delivery or a lost fulfilment.
    const updated = await tx.store.secrets.setStatus(
      row.id,
      row.status,
      status,
      ciphertext,
      now,
      proof,
    )
    if (!updated) throw fail.conflict('the secret request changed meanwhile; read it again')
    const shown = await tx.store.messages.byId(row.message_id)
    let message: MessageRow | undefined
    if (shown && shown.body !== null) {
      const body = JSON.parse(shown.body) as MessageBody
      body.blocks = (body.blocks ?? []).map((b) =>
        b.type === 'secret_request' && b.request_id === row.id ? { ...b, status } : b,
      )
      message = await tx.store.messages.setBody(shown.rid, JSON.stringify(body), now)
    }
    if (message) await announce(tx, message)
    tx.wake(secretKey(row.id))
    return updated
  })
}

/** The agent's own request, or 404: another channel's requests do not exist here. */
async function agentSecret(ctx: Ctx, channel: ChannelRow, id: string): Promise<SecretRow> {
  const row = await ctx.store.secrets.byId(id)
  if (!row || row.channel_id !== channel.id) throw fail.notFound('secret request')
  return row
}

export interface SecretRead {
  secret_request: SecretRecord
  ciphertext?: string
  proof?: AnswerProof
}

/**
 * The agent's poll: held while the request is pending. A fulfilled request is delivered on
 * this read — the ciphertext is answered once and erased from the database in the same step,
 * so a second read (or a replayed one) finds `delivered` and nothing to take.
 */
export async function readSecret(
  ctx: Ctx,
  channel: ChannelRow,
  id: string,
  waitMs: number,
  signal?: Abortable,
): Promise<SecretRead> {
  let row = await agentSecret(ctx, channel, id)
  if (row.status === 'pending' && waitMs > 0) {
    const reread = async () => {
      const latest = await ctx.store.secrets.byId(id)
      if (!latest) throw fail.notFound('secret request')
      return latest
    }
    const isPending = (r: SecretRow) => r.status === 'pending'
    const { settled, last } = await waitWhilePending(
      ctx.waiters,
      secretKey(id),
      waitMs,
      signal,
      row,
      reread,
      isPending,
    )
    // On shutdown the database may already be closed: answer with the last state read.
    if (ctx.waiters.isClosed) return { secret_request: secretOf(settled ?? last) }
    row = await agentSecret(ctx, channel, id)
  }
  if (row.status !== 'fulfilled' || row.ciphertext === null)
    return { secret_request: secretOf(row) }
  const { ciphertext, proof } = row
  const delivered = secretOf(await transition(ctx, row, 'delivered', null))
  return {
    secret_request: delivered,
    ciphertext,
    ...(proof === null ? {} : { proof: JSON.parse(proof) as AnswerProof }),
  }
}

/** The agent withdraws its request; a fulfilled one loses its ciphertext unread. */
export async function cancelSecret(ctx: Ctx, channel: ChannelRow, id: string): Promise<SecretRow> {
  const row = await agentSecret(ctx, channel, id)
  if (row.status === 'delivered' || row.status === 'cancelled') {
    throw fail.conflict(`the secret request is already ${row.status}`)
  }
  return await transition(ctx, row, 'cancelled', null)
}

/** A request in one of this person's channels, or 404, worded like an unknown id. */
export async function personSecret(ctx: Ctx, userId: string, id: string): Promise<SecretRow> {
  const row = await ctx.store.secrets.byId(id)
  const channel = row ? await ctx.store.channels.byId(row.channel_id) : undefined
  if (!row || !channel || channel.user_id !== userId) throw fail.notFound('secret request')
  return row
}

/**
 * The claim a secret's signed answer makes (src/shared/proof.ts secretDecision): this request,
 * the name and key it was made with, and the SHA-256 of exactly this ciphertext.
 */
export const secretClaim = (
  row: Pick<SecretRow, 'id' | 'channel_id' | 'name' | 'public_key'>,
  ciphertext: string,
  answeredAt: number,
) => ({
  channel_id: row.channel_id,
  message_id: row.id,
  request_hash: sha256(secretRequest(row.name, row.public_key)),
  decision: secretDecision(sha256(ciphertext)),
  answered_at: answeredAt,
})

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/**
 * The person answers with ciphertext made in their browser. The server cannot check more than
 * its shape and size (only the agent's private key opens it), and the passkey's signature over
 * it when there is one: the agent checks that again, and refuses a ciphertext not signed.
 */
export async function fulfilSecret(
  ctx: Ctx,
  userId: string,
  id: string,
  ciphertext: string,
  proof?: AnswerProof,
): Promise<SecretRow> {
  const row = await personSecret(ctx, userId, id)
  if (ciphertext.length > MAX_CIPHERTEXT_CHARS || !CIPHERTEXT_PATTERN.test(ciphertext)) {
    throw fail.invalid('ciphertext', 'must be a v1 envelope: v1.<key>.<iv>.<data>, base64url')
  }
  if (row.status !== 'pending') throw fail.conflict(`the secret request is already ${row.status}`)
  if (proof) {
    const claim = secretClaim(row, ciphertext, proof.answered_at)
    await checkClaim(ctx, userId, claim, proof, row.created_at)
  }
  // Re-read in transition (from 'pending'): one fulfilled meanwhile is a conflict.
  return await transition(ctx, row, 'fulfilled', ciphertext, proof ? JSON.stringify(proof) : null)
}
