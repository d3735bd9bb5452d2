import type { Ctx } from '../../core/context.ts'
import { fail } from '../../core/errors.ts'
import { hashToken, newId, newSecret } from '../../core/ids.ts'
import type { UserRow } from '../rows.ts'
import type { SessionRow } from './store.ts'

/** A session lives 30 days past its last use; use extends it at most once an hour. */
const SESSION_TTL_MS = 30 * 24 * 3600 * 1000
const TOUCH_EVERY_MS = 3600 * 1000

/**
 * The cookie's name. Over https it takes the `__Host-` prefix, which browsers only accept
 * with Secure, Path=/ and no Domain: the cookie cannot be planted or widened by a subdomain.
 */
export const cookieName = (ctx: Ctx) => (secureOrigin(ctx) ? '__Host-hark_session' : 'hark_session')

const secureOrigin = (ctx: Ctx) => ctx.config.baseUrl.startsWith('https:')

function cookie(ctx: Ctx, value: string, maxAgeSeconds: number): string {
  const parts = [
    `${cookieName(ctx)}=${value}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${maxAgeSeconds}`,
  ]
  if (secureOrigin(ctx)) parts.push('Secure')
  return parts.join('; ')
}

export const clearCookie = (ctx: Ctx) => cookie(ctx, '', 0)

/**
 * Starts a fresh session (a login always gets a new id: no fixation) and returns the
 * Set-Cookie value. The secret only lives in the cookie; the table keeps its hash.
 */
export async function startSession(
  ctx: Ctx,
  user: UserRow,
  userAgent: string | null,
): Promise<{ session: SessionRow; setCookie: string }> {
  const { secret, hash } = newSecret(43)
  const now = ctx.clock.now()
  // Nothing else sweeps sessions: each login clears the expired ones, so the table stays small.
  const session = await ctx.writes.apply(async (tx) => {
    await tx.store.sessions.removeExpired(now)
    return await tx.store.sessions.insert({
      id: newId('ses'),
      hash,
      user_id: user.id,
      user_agent: userAgent?.slice(0, 300) ?? null,
      created_at: now,
      expires_at: now + SESSION_TTL_MS,
    })
  })
  return { session, setCookie: cookie(ctx, secret, SESSION_TTL_MS / 1000) }
}

function cookieValue(ctx: Ctx, header: string | null): string | undefined {
  if (!header) return undefined
  const name = `${cookieName(ctx)}=`
  for (const part of header.split(';')) {
    const p = part.trim()
    if (p.startsWith(name)) return p.slice(name.length)
  }
  return undefined
}

/**
 * The live session named by the request's cookie, if any (expired ones are ignored). Use extends
 * the session (at most once an hour); `setCookie` is then the same cookie with a fresh Max-Age,
 * for the response to carry: the browser would otherwise drop it 30 days after login, however
 * active the person is.
 */
export async function sessionFromCookie(
  ctx: Ctx,
  cookieHeader: string | null,
): Promise<{ session: SessionRow; user: UserRow; setCookie?: string } | undefined> {
  const secret = cookieValue(ctx, cookieHeader)
  if (!secret) return undefined
  const found = await ctx.store.sessions.withPerson(hashToken(secret))
  const now = ctx.clock.now()
  if (!found || found.session.expires_at <= now) return undefined
  const { session, user } = found
  if (now - session.last_seen_at > TOUCH_EVERY_MS) {
    await ctx.writes.apply(
      async (tx) => await tx.store.sessions.touch(session.id, now, now + SESSION_TTL_MS),
    )
    return { session, user, setCookie: cookie(ctx, secret, SESSION_TTL_MS / 1000) }
  }
  return { session, user }
}

/**
 * Cookie-authenticated writes must come from the app's own origin (the base URL): a missing,
 * foreign or `null` Origin is refused, so another site cannot ride the person's cookie.
 */
export function checkOrigin(ctx: Ctx, request: Request): void {
  const origin = request.headers.get('origin')
  if (origin !== new URL(ctx.config.baseUrl).origin) {
    throw fail.forbidden('cross-origin request refused (the Origin header must be the base URL)')
  }
}

/** The person's live sessions: an expired one no longer logs anyone in, so it is not shown. */
export const listSessions = async (ctx: Ctx, userId: string) =>
  (await ctx.store.sessions.byUser(userId)).filter((s) => s.expires_at > ctx.clock.now())

export async function endSession(ctx: Ctx, userId: string, sessionId: string): Promise<void> {
  if (!(await ctx.writes.apply(async (tx) => await tx.store.sessions.remove(sessionId, userId)))) {
    throw fail.notFound('session')
  }
}

/** "Log out everywhere": every session of the person ends. */
export const endAllSessions = async (ctx: Ctx, userId: string) =>
  await ctx.writes.apply(async (tx) => await tx.store.sessions.removeAll(userId))
