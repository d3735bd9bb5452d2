import { createHash } from 'node:crypto'
import type { Ctx, Tx } from '../../core/context.ts'
import { fail } from '../../core/errors.ts'
import { stallGuarded } from '../../core/http/stalls.ts'
import type { ChannelRow } from '../rows.ts'
import type { AgentAuth } from '../tokens/service.ts'
import {
  jsonRequestHash,
  KEY_TTL_MS,
  keyConflict,
  keyOf,
  REPLAYED_HEADER,
  SWEEP_EVERY_MS,
  uploadRequestHash,
} from './keys.ts'
import type { KeyRow } from './store.ts'

/**
 * Safe retries of the agent's writes (PRODUCT.md "Safe retries", docs/decisions.md). A write
 * sent with an `Idempotency-Key` stores its answer under the key in the same transaction as the
 * write itself: after a crash either both happened or neither, so a retry finds the answer or
 * writes for the first time, never twice. Without the header a write costs one header read more.
 */

/**
 * One person's writes may share a transaction (on Postgres: one hold of their row's lock, one
 * COMMIT; core/write-path.ts `RunOptions`), keyed by the channel's person: an agent's keyed
 * write here, a send (messages/service.ts) whether keyed or not.
 */
export const personBatch = (channel: Pick<ChannelRow, 'user_id'>) => ({ batch: channel.user_id })

/** What a keyed write needs of its request: the channel, the request, its parsed JSON body. */
export interface KeyedCall {
  agent: Pick<AgentAuth, 'channel'>
  request: Request
  body?: unknown
  /**
   * Who writes, when not the channel's agent: the person's user id. Their keys live apart from
   * the agent's on the same channel, so neither side's key can ever collide with the other's.
   */
  writer?: string
}

/**
 * How an upload hands its answer over from inside the unit that records the file (`tx`: that
 * unit's).
 */
export type OnRecord<T> = (tx: Tx, answer: T, bytesSha256: string) => Promise<void>

/**
 * Runs an agent write safe to retry. With a key: an answer already stored is given again (the
 * same request) or 409 (another request); otherwise `write` runs inside one unit of the write
 * path that also stores its answer (the units `write`'s services apply join it: they run in its
 * async call chain). An error rolls both back: nothing is kept, and the key may be tried again.
 * So `write` must be a unit's work: stores and units only, no network or file I/O.
 */
export async function retrySafe<T extends object>(
  ctx: Ctx,
  call: KeyedCall,
  write: () => T | Promise<T>,
): Promise<T | Response> {
  const key = keyOf(call.request)
  if (key === undefined) return write()
  return keyed(ctx, call, scoped(call, key), jsonRequestHash(call.request, call.body), write)
}

/**
 * The key as stored: a person's is prefixed with their id and a newline, which no sent key can
 * hold (they are printable ASCII), so it never equals an agent's key. No column of its own: the
 * table stays as it is, and the 255-character limit applies to what the client sends.
 */
const scoped = (call: KeyedCall, key: string) =>
  call.writer === undefined ? key : `person ${call.writer}\n${key}`

async function keyed<T extends object>(
  ctx: Ctx,
  call: KeyedCall,
  key: string,
  hash: string,
  write: () => T | Promise<T>,
): Promise<Response> {
  const channelId = call.agent.channel.id
  for (let busy = busyWith(ctx, channelId, key); busy; busy = busyWith(ctx, channelId, key)) {
    await busy
  }
  // Held from the last check on (nothing awaited in between): a second request with this key
  // waits above until this one's unit has settled, then finds its answer.
  const release = ctx.idempotency.hold(writeId(channelId, key))
  try {
    // One unit: the lookup, the write and its key; durable together, or none of it is.
    // Batched as the write it wraps (a send: the channel's person's batch on Postgres).
    const done = await ctx.writes.run(async (tx): Promise<KeyRow | string> => {
      const found = await find(ctx, tx, channelId, key)
      if (found) return found
      const text = JSON.stringify(await write())
      await keep(ctx, tx, {
        channel_id: channelId,
        key,
        request_hash: hash,
        status: 200,
        response: text,
      })
      return text
    }, personBatch(call.agent.channel))
    return typeof done === 'string' ? answerOf(200, done) : replay(done, hash)
  } finally {
    release()
  }
}

/**
 * An upload made safe to retry. Its bytes are only known once read, so the answer is stored by
 * the upload itself, through `onRecord`, in the transaction that records the file; meanwhile the
 * key is held and a second request with it waits. A retry of a stored upload reads the bytes to
 * compare them and writes nothing (no file, no quota taken).
 */
export async function retrySafeUpload<T extends object>(
  ctx: Ctx,
  call: KeyedCall,
  upload: (onRecord?: OnRecord<T>) => Promise<T>,
): Promise<T | Response> {
  const sent = keyOf(call.request)
  if (sent === undefined) return upload()
  const key = scoped(call, sent)
  const channelId = call.agent.channel.id
  for (let busy = busyWith(ctx, channelId, key); busy; busy = busyWith(ctx, channelId, key)) {
    await busy
  }
  const found = await find(ctx, ctx, channelId, key)
  if (found) {
    const hash = uploadRequestHash(call.request, await digest(ctx, call.request.body))
    return replay(found, hash)
  }
  const release = ctx.idempotency.hold(writeId(channelId, key))
  try {
    let json = ''
    await upload(async (tx, answer, bytesSha256) => {
      json = JSON.stringify(answer)
      const request_hash = uploadRequestHash(call.request, bytesSha256)
      await keep(ctx, tx, { channel_id: channelId, key, request_hash, status: 200, response: json })
    })
    return answerOf(200, json)
  } finally {
    release()
  }
}

const writeId = (channelId: string, key: string) => `${channelId}\n${key}`

/** Settles when another request's write under the same key ends (an upload still streaming). */
const busyWith = (ctx: Ctx, channelId: string, key: string) =>
  ctx.idempotency.busy(writeId(channelId, key))

/** The live answer under the key: the one indexed lookup a keyed write pays before writing. */
const find = async (ctx: Ctx, reader: Pick<Tx, 'store'>, channelId: string, key: string) =>
  await reader.store.idempotency.find(channelId, key, ctx.clock.now() - KEY_TTL_MS)

function replay(found: KeyRow, hash: string): Response {
  if (found.request_hash !== hash) throw keyConflict()
  return answerOf(found.status, found.response, true)
}

/** Stores the answer (inside the write's transaction) and now and then sweeps expired keys. */
async function keep(ctx: Ctx, tx: Tx, row: Omit<KeyRow, 'created_at'>): Promise<void> {
  const now = ctx.clock.now()
  const cutoff = now - KEY_TTL_MS
  // Held keys and the lookup above leave no live row here; if one appeared anyway (another
  // process on the same file), refusing keeps the rule: never two writes under one key.
  if (!(await tx.store.idempotency.claim({ ...row, created_at: now }, cutoff))) throw keyConflict()
  if (now - ctx.idempotency.sweptAt >= SWEEP_EVERY_MS) {
    ctx.idempotency.sweptAt = now
    await tx.store.idempotency.sweep(cutoff)
  }
}

/** The answer as the write gave it: the same bytes the first time and on every replay. */
function answerOf(status: number, json: string, replayed = false): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json;charset=utf-8' }
  if (replayed) headers[REPLAYED_HEADER] = 'true'
  return new Response(json, { status, headers })
}

/** SHA-256 of an upload's bytes, read under the same size and stall limits as an upload. */
async function digest(ctx: Ctx, body: ReadableStream<Uint8Array> | null): Promise<string> {
  const hash = createHash('sha256')
  const limit = ctx.config.maxFileSize
  let size = 0
  if (body) {
    for await (const chunk of stallGuarded(body, ctx.config.uploadStallMs)) {
      size += chunk.byteLength
      if (size > limit) throw fail.tooLarge(`file is larger than the ${limit}-byte limit`)
      hash.update(chunk)
    }
  }
  return hash.digest('hex')
}
