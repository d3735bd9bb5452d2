import type { PairingStart } from '../../../sdk/typescript/src/types.ts'
import { type PersonAuth, requireSession } from '../../access/person.ts'
import { issueToken } from '../../access/tokens/service.ts'
import { channelsChanged } from '../../channels/service.ts'
import type { Ctx } from '../../core/context.ts'
import { fail } from '../../core/errors.ts'
import { hashToken, newId, newSecret } from '../../core/ids.ts'
import { cleanHost, cleanLabel } from '../../core/labels.ts'
import { type Abortable, pollFor } from '../../core/waiters.ts'
import { newChannel } from '../service.ts'
import type { PairingRow } from './store.ts'

/**
 * The device flow behind `hark init` (like `gh auth login`): the CLI starts a pairing and keeps
 * the secret device code; the person sees a short user code, and approves it in the app while
 * logged in; the CLI's long-poll then receives the token of the new channel, exactly once.
 */
const TTL_MS = 10 * 60 * 1000
const SWEEP_AFTER_MS = 60 * 60 * 1000
/** Consonants only: no vowels means no words, and no 0/O or 1/I confusion. */
const CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'

const pairingKey = (id: string) => `pairing:${id}`
/** Woken when a pairing starts or is answered: the owner's list of pending ones reads again. */
const PENDING_KEY = 'pairings:pending'

function newUserCode(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  let code = ''
  for (const b of bytes) {
    if (b < 240 && code.length < 8) code += CODE_ALPHABET[b % 20]
  }
  return code.length === 8 ? `${code.slice(0, 4)}-${code.slice(4)}` : newUserCode()
}

/** `bcdf ghjk`, `BCDF-GHJK`, `bcdfghjk` → `BCDF-GHJK`. */
export function normaliseUserCode(raw: string): string {
  const letters = raw.toUpperCase().replace(/[^A-Z]/g, '')
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : letters
}

/** The wire shape `hark init` reads; the SDK's, which imports nothing. */
export type { PairingStart }

/** What `hark init` says about itself when it starts a pairing. */
export interface PairingRequest {
  label?: string
  /** The machine's host name: shown to the person, a claim the server cannot check. */
  host?: string
}

export async function startPairing(
  ctx: Ctx,
  request: PairingRequest,
  address: string,
): Promise<PairingStart> {
  const label = request.label === undefined ? null : cleanLabel(request.label)
  const host = request.host === undefined ? null : cleanHost(request.host)
  const now = ctx.clock.now()
  // Swept a while after expiry, not at once: a CLI still polling hears "expired", not 404.
  const { secret: deviceCode, hash: deviceHash } = newSecret(43)
  const row = await ctx.writes.apply(async (tx) => {
    await tx.store.pairings.removeExpired(now - SWEEP_AFTER_MS)
    tx.wake(PENDING_KEY)
    return await tx.store.pairings.insert({
      id: newId('pair'),
      device_hash: deviceHash,
      user_code: newUserCode(),
      label,
      host,
      address,
      created_at: now,
      expires_at: now + TTL_MS,
    })
  })
  const uri = `${ctx.config.baseUrl}/pair`
  return {
    device_code: deviceCode,
    user_code: row.user_code,
    verification_uri: uri,
    verification_uri_complete: `${uri}?code=${row.user_code}`,
    expires_in: TTL_MS / 1000,
    // The CLI long-polls with `wait`; the interval only applies to clients that cannot.
    interval: 5,
  }
}

export type PairingResult =
  | { status: 'pending' | 'denied' | 'expired' }
  | { status: 'approved'; token: string; channel: { id: string; label: string } }

const isLive = (ctx: Ctx, row: PairingRow) => row.expires_at > ctx.clock.now()

/**
 * The CLI's side: holds until the person approves or denies (or `waitMs` passes). An approval
 * is redeemed here, once: the token is made now and never stored in plaintext.
 */
export async function pollPairing(
  ctx: Ctx,
  deviceCode: unknown,
  waitMs: number,
  signal?: Abortable,
): Promise<PairingResult> {
  if (typeof deviceCode !== 'string' || deviceCode === '') {
    throw fail.invalid('device_code', 'is required')
  }
  const hash = hashToken(deviceCode)
  const first = await ctx.store.pairings.byDevice(hash)
  if (!first || first.status === 'redeemed') throw fail.notFound('pairing')
  const settled = await pollFor(ctx.waiters, pairingKey(first.id), waitMs, signal, async () => {
    const row = await ctx.store.pairings.byDevice(hash)
    if (!row) return { status: 'expired' as const }
    if (row.status !== 'pending' || !isLive(ctx, row)) return row
    return undefined
  })
  const row = settled && 'id' in settled ? settled : await ctx.store.pairings.byDevice(hash)
  if (!row) return { status: 'expired' }
  if (row.status === 'denied') return { status: 'denied' }
  if (row.status === 'approved') return await redeem(ctx, row)
  if (row.status === 'redeemed') throw fail.notFound('pairing')
  return { status: isLive(ctx, row) ? 'pending' : 'expired' }
}

async function redeem(ctx: Ctx, row: PairingRow): Promise<PairingResult> {
  return await ctx.writes.apply(async (tx): Promise<PairingResult> => {
    if (!(await tx.store.pairings.redeem(row.id))) throw fail.notFound('pairing')
    const channel = await tx.store.channels.byId(row.channel_id as string)
    const user = await tx.store.users.byId(row.user_id as string)
    if (!channel || !user) return { status: 'denied' }
    const { token } = await issueToken(ctx, 'agent', user, channel, channel.label)
    return { status: 'approved', token, channel: { id: channel.id, label: channel.label } }
  })
}

/** The person's view of a pending pairing, by its user code. */
export async function findPendingPairing(ctx: Ctx, code: string): Promise<PairingRow> {
  const row = await ctx.store.pairings.byUserCode(normaliseUserCode(code))
  if (row?.status !== 'pending' || !isLive(ctx, row)) throw fail.notFound('pairing code')
  return row
}

export const pairingView = (row: PairingRow) => ({
  user_code: row.user_code,
  label: row.label,
  host: row.host,
  address: row.address,
  status: row.status,
  created_at: row.created_at,
  expires_at: row.expires_at,
})

export interface PendingPairings {
  pairings: ReturnType<typeof pairingView>[]
  /** Names this list: sent back as `version`, the next read waits until the list differs. */
  version: string
}

async function pendingNow(ctx: Ctx): Promise<{ list: PendingPairings; expiresAt: number }> {
  const rows = await ctx.store.pairings.pending(ctx.clock.now())
  const version = Bun.hash(rows.map((r) => r.id).join(',')).toString(36)
  const expiresAt = Math.min(...rows.map((r) => r.expires_at))
  return { list: { pairings: rows.map(pairingView), version }, expiresAt }
}

/**
 * The pairings waiting for an answer, oldest first, for the owner: what the setup wizard and
 * the home screen show live, so a `hark init` appears without its code being typed. Only the
 * owner sees them: a pairing is not yet anyone's, and whoever approves one gets that machine's
 * agent (and its approvals) in their account. Long-polls while the list is still `known`, until
 * it changes, `waitMs` passes, or the oldest shown expires.
 */
export async function watchPendingPairings(
  ctx: Ctx,
  person: PersonAuth,
  known: string | undefined,
  waitMs: number,
  signal?: Abortable,
): Promise<PendingPairings> {
  if (!person.user.is_owner) throw fail.forbidden('only the owner sees pending pairings')
  const first = await pendingNow(ctx)
  if (first.list.version !== known || waitMs <= 0) return first.list
  const untilExpiry = first.expiresAt - ctx.clock.now()
  const changed = await pollFor(
    ctx.waiters,
    PENDING_KEY,
    Math.max(0, Math.min(waitMs, untilExpiry)),
    signal,
    async () => {
      const now = await pendingNow(ctx)
      return now.list.version === known ? undefined : now.list
    },
  )
  return changed ?? (await pendingNow(ctx)).list
}

/** Approving creates the agent's channel (named by the person) and wakes the waiting CLI. */
export async function approvePairing(ctx: Ctx, person: PersonAuth, code: string, label: unknown) {
  // Approving mints an agent token into the person's account: a leaked person token must not.
  requireSession(person, 'approving a pairing')
  const row = await findPendingPairing(ctx, code)
  const name = label === undefined ? (row.label ?? 'Agent') : cleanLabel(label)
  const settled = await ctx.writes.apply(async (tx) => {
    const channel = await newChannel(ctx, person.user.id, name)
    const done = await tx.store.pairings.settle(row.id, 'approved', person.user.id, channel.id)
    if (!done) throw fail.conflict('this pairing was already answered')
    tx.wake(pairingKey(row.id))
    tx.wake(PENDING_KEY)
    await channelsChanged(tx, person.user.id)
    return { pairing: done, channel }
  })
  return {
    pairing: pairingView(settled.pairing),
    channel: { id: settled.channel.id, label: settled.channel.label },
  }
}

export async function denyPairing(ctx: Ctx, person: PersonAuth, code: string) {
  const row = await findPendingPairing(ctx, code)
  const done = await ctx.writes.apply(async (tx) => {
    const settled = await tx.store.pairings.settle(row.id, 'denied', person.user.id, null)
    if (!settled) throw fail.conflict('this pairing was already answered')
    tx.wake(pairingKey(row.id))
    tx.wake(PENDING_KEY)
    return settled
  })
  return { pairing: pairingView(done) }
}
