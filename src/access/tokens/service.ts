import type { ChannelRow } from '../../channels/store.ts'
import type { Ctx } from '../../core/context.ts'
import { fail, HarkError } from '../../core/errors.ts'
import { hashToken, newId, newToken, sameHash, type TokenKind } from '../../core/ids.ts'
import { cleanLabel } from '../../core/labels.ts'
import type { UserRow } from '../../people/store.ts'
import { type PersonAuth, requireSession } from '../person.ts'
import type { TokenRow } from './store.ts'

/**
 * Tokens in one place: issuing them, checking the bearer token of a request, and the person's
 * own list (make, revoke, rotate). Agent tokens open one channel; person tokens act as the
 * person (scripts). Stored only as SHA-256 hashes.
 */

/** What issuing needs: the stores and a clock, not a running server. */
type Issuing = Pick<Ctx, 'store' | 'clock'>

/** A new token of `kind`, returned once in plaintext and stored as its hash. */
export async function issueToken(
  p: Issuing,
  kind: TokenKind,
  user: UserRow,
  channel: ChannelRow | null,
  label: string | null,
): Promise<{ token: string; row: TokenRow }> {
  const token = newToken(kind)
  const row = await p.store.tokens.insert({
    id: newId('tok'),
    kind,
    hash: hashToken(token),
    user_id: user.id,
    channel_id: channel?.id ?? null,
    label,
    created_at: p.clock.now(),
  })
  return { token, row }
}

/** What a token list shows: never the secret, nor its hash. */
export interface TokenInfo {
  id: string
  kind: TokenKind
  label: string | null
  channel_id: string | null
  created_at: number
  last_used_at: number | null
}

export const tokenInfo = (row: TokenRow): TokenInfo => ({
  id: row.id,
  kind: row.kind,
  label: row.label,
  channel_id: row.channel_id,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
})

export interface AgentAuth {
  token: TokenRow
  channel: ChannelRow
}

/** How often `last_used_at` is written at most: a read should not cost a write each time. */
const TOUCH_EVERY_MS = 60_000

function bearer(header: string | undefined): string {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
  if (!m) throw fail.unauthorized('missing token: send Authorization: Bearer <token>')
  return m[1] as string
}

async function lookup(
  ctx: Ctx,
  header: string | undefined,
  kind: TokenKind,
  hash = hashToken(bearer(header)),
): Promise<TokenRow> {
  return await checked(ctx, await ctx.store.tokens.byHash(hash), hash, kind)
}

/** `row` if it is the live token of `hash` and of `kind`; its use recorded once a minute. */
async function checked(
  ctx: Ctx,
  row: TokenRow | undefined,
  hash: Uint8Array,
  kind: TokenKind,
): Promise<TokenRow> {
  if (!row || !sameHash(row.hash, hash) || row.revoked_at !== null) {
    throw fail.unauthorized('invalid or revoked token')
  }
  if (row.kind !== kind) {
    throw new HarkError(
      403,
      kind === 'agent'
        ? 'this is a person token; agent routes need an agent token'
        : "this is an agent token; the person's routes need a person token or a session",
    )
  }
  if (touchDue(ctx, row)) {
    const now = ctx.clock.now()
    await ctx.writes.apply(async (tx) => await tx.store.tokens.touch(row.id, now))
  }
  return row
}

const touchDue = (ctx: Ctx, row: TokenRow) =>
  row.last_used_at === null || ctx.clock.now() - row.last_used_at > TOUCH_EVERY_MS

export async function authenticateAgent(ctx: Ctx, header: string | undefined): Promise<AgentAuth> {
  const hash = hashToken(bearer(header))
  const cache = ctx.authCache
  const mark = cache?.mark()
  const key = cache ? Buffer.from(hash).toString('base64') : ''
  const known = mark && cache?.get(key, mark)
  // Remembered: found good since the last write to tokens, channels or people (auth-cache.ts).
  // Its last use is still recorded once a minute (that write empties the cache).
  if (known && !touchDue(ctx, known.token)) return { token: known.token, channel: known.channel }
  // The token and its channel in one read (one round trip on Postgres).
  const found = await ctx.store.tokens.withChannel(hash)
  const token = await checked(ctx, found?.token, hash, 'agent')
  const channel = found?.channel
  if (!channel) throw fail.unauthorized('invalid or revoked token')
  if (mark) cache?.set(key, { token, channel }, mark)
  return { token, channel }
}

export async function authenticatePerson(
  ctx: Ctx,
  header: string | undefined,
): Promise<PersonAuth> {
  const token = await lookup(ctx, header, 'person')
  const user = await ctx.store.users.byId(token.user_id)
  if (!user) throw fail.unauthorized('invalid or revoked token')
  return { token, user }
}

/**
 * The person's tokens: their person tokens (for scripts) and the agent tokens of their
 * channels. Shown once when made; afterwards only their label and use times.
 */
export const listTokens = async (ctx: Ctx, person: PersonAuth): Promise<TokenInfo[]> =>
  (await ctx.store.tokens.liveByUser(person.user.id)).map(tokenInfo)

async function ownLiveToken(ctx: Ctx, person: PersonAuth, id: string) {
  const row = await ctx.store.tokens.byId(id)
  if (!row || row.user_id !== person.user.id || row.revoked_at !== null)
    throw fail.notFound('token')
  return row
}

/** Making and rotating need a browser session: a token may not mint its own successors. */
export async function createPersonToken(ctx: Ctx, person: PersonAuth, label: unknown) {
  requireSession(person, 'making a token')
  const name = cleanLabel(label ?? 'Script')
  const { token, row } = await ctx.writes.apply(
    async () => await issueToken(ctx, 'person', person.user, null, name),
  )
  return { token, info: tokenInfo(row) }
}

/** Revoking takes effect at once: the next request with it gets 401. */
export async function revokeToken(ctx: Ctx, person: PersonAuth, id: string): Promise<void> {
  await ownLiveToken(ctx, person, id)
  await ctx.writes.apply(async (tx) => await tx.store.tokens.revoke(id, ctx.clock.now()))
}

/** A new secret for the same purpose (kind, channel, label); the old one stops working. */
export async function rotateToken(ctx: Ctx, person: PersonAuth, id: string) {
  requireSession(person, 'rotating a token')
  return await ctx.writes.apply(async (tx) => {
    const old = await ownLiveToken(ctx, person, id)
    await tx.store.tokens.revoke(id, ctx.clock.now())
    const channel = old.channel_id ? ((await tx.store.channels.byId(old.channel_id)) ?? null) : null
    const { token, row } = await issueToken(ctx, old.kind, person.user, channel, old.label)
    return { token, info: tokenInfo(row) }
  })
}
