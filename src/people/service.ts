import type { SessionRow } from '../access/sessions/store.ts'
import type { ChannelRow } from '../channels/store.ts'
import { fail, HarkError } from '../core/errors.ts'
import { hashToken, newId, newToken, sameHash, type TokenKind } from '../core/ids.ts'
import { LIMITS } from '../messages/limits.ts'
import type { Ctx } from '../server/context.ts'
import type { TokenRow, UserRow } from './store.ts'

/** What provisioning needs: the stores and a clock, not a running server. */
export type Provisioning = Pick<Ctx, 'db' | 'store' | 'clock'>

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export function cleanLabel(raw: unknown, field = 'label'): string {
  if (typeof raw !== 'string') throw fail.invalid(field, 'must be a string')
  const label = raw.trim()
  if (label.length < 1 || label.length > LIMITS.labelChars) {
    throw fail.invalid(field, `must be 1 to ${LIMITS.labelChars} characters`)
  }
  return label
}

export function addUser(
  p: Provisioning,
  input: { email: string; name?: string; owner?: boolean },
): UserRow {
  const email = input.email.trim()
  if (!EMAIL.test(email) || email.length > 254)
    throw fail.invalid('email', 'is not an email address')
  return p.db
    .transaction(() => {
      if (p.store.users.byEmail(email)) throw fail.conflict(`${email} already has an account`)
      if (input.owner && p.store.users.hasOwner())
        throw fail.conflict('this server already has an owner')
      return p.store.users.insert({
        id: newId('usr'),
        email,
        name: input.name?.trim() || null,
        is_owner: input.owner === true,
        created_at: p.clock.now(),
        // The operator vouches for the address.
        email_verified: true,
      })
    })
    .immediate()
}

function userByEmail(p: Provisioning, email: string): UserRow {
  const user = p.store.users.byEmail(email.trim())
  if (!user) throw fail.notFound(`person ${email}`)
  return user
}

/** A new token of `kind`, returned once in plaintext and stored as its hash. */
export function issueToken(
  p: Provisioning,
  kind: TokenKind,
  user: UserRow,
  channel: ChannelRow | null,
  label: string | null,
): { token: string; row: TokenRow } {
  const token = newToken(kind)
  const row = p.store.tokens.insert({
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

/**
 * A new channel of the person, unless they have `LIMITS.channelsPerPerson` already (409): each
 * is an agent that may send, store files and push to the person's devices. Call in a transaction.
 */
export function newChannel(p: Provisioning, userId: string, label: string): ChannelRow {
  const channel = p.store.channels.insert(
    newId('ch'),
    userId,
    label,
    p.clock.now(),
    LIMITS.channelsPerPerson,
  )
  if (!channel) {
    throw fail.conflict(
      `you have ${LIMITS.channelsPerPerson} connected agents, the most there can be; ` +
        'delete a channel in the app to connect another',
    )
  }
  return channel
}

/** A new channel for the person, with its agent token (shown once, stored as a hash). */
export function addChannel(
  p: Provisioning,
  input: { email: string; label?: string },
): { channel: ChannelRow; token: string } {
  const label = cleanLabel(input.label ?? 'Agent')
  return p.db
    .transaction(() => {
      const user = userByEmail(p, input.email)
      const channel = newChannel(p, user.id, label)
      return { channel, token: issueToken(p, 'agent', user, channel, label).token }
    })
    .immediate()
}

/** A person token, for scripts that act as the person. */
export function addPersonToken(
  p: Provisioning,
  input: { email: string; label?: string },
): { token: string; row: TokenRow } {
  const label = input.label === undefined ? null : cleanLabel(input.label)
  return p.db
    .transaction(() => issueToken(p, 'person', userByEmail(p, input.email), null, label))
    .immediate()
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

/** The person behind a request: by a person token (scripts) or a session cookie (the app). */
export interface PersonAuth {
  user: UserRow
  token?: TokenRow
  session?: SessionRow
}

/** How often `last_used_at` is written at most: a read should not cost a write each time. */
const TOUCH_EVERY_MS = 60_000

function bearer(header: string | undefined): string {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
  if (!m) throw fail.unauthorized('missing token: send Authorization: Bearer <token>')
  return m[1] as string
}

function lookup(ctx: Ctx, header: string | undefined, kind: TokenKind): TokenRow {
  const secret = bearer(header)
  const hash = hashToken(secret)
  const row = ctx.store.tokens.byHash(hash)
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
  const now = ctx.clock.now()
  if (row.last_used_at === null || now - row.last_used_at > TOUCH_EVERY_MS) {
    ctx.store.tokens.touch(row.id, now)
  }
  return row
}

export function authenticateAgent(ctx: Ctx, header: string | undefined): AgentAuth {
  const token = lookup(ctx, header, 'agent')
  const channel = ctx.store.channels.byId(token.channel_id as string)
  if (!channel) throw fail.unauthorized('invalid or revoked token')
  return { token, channel }
}

export function authenticatePerson(ctx: Ctx, header: string | undefined): PersonAuth {
  const token = lookup(ctx, header, 'person')
  const user = ctx.store.users.byId(token.user_id)
  if (!user) throw fail.unauthorized('invalid or revoked token')
  return { token, user }
}
