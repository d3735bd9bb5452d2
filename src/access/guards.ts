import { Elysia } from 'elysia'
import { requestIp } from '../core/client-address.ts'
import type { Ctx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { pathOf } from '../core/http/front-door.ts'
import type { RateLimiter } from '../core/rate-limit.ts'
import type { PersonAuth } from './person.ts'
import { checkOrigin, sessionFromCookie } from './sessions/service.ts'
import { type AgentAuth, authenticateAgent, authenticatePerson } from './tokens/service.ts'

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Where the agent guard stands; `/v1/app/` has the person guard; the rest is public. */
const AGENT_PREFIXES = [
  '/v1/messages',
  '/v1/asks',
  '/v1/pins',
  '/v1/files',
  '/v1/channel',
  '/v1/agent',
  '/v1/secrets',
]

/**
 * The authentication error a request would get from its route's guard, if any. Elysia parses a
 * JSON body before any guard runs, so a stranger sending malformed JSON would learn about the
 * body first; the error handler asks this so that 401/403 always outrank a parse error.
 */
export async function authErrorFor(ctx: Ctx, request: Request): Promise<unknown> {
  const path = pathOf(request.url)
  try {
    if (path.startsWith('/v1/app/')) await personOf(ctx, request)
    // A malformed write still counts against the channel's write limit, like any rejected one.
    else if (AGENT_PREFIXES.some((p) => path === p || path.startsWith(`${p}/`)))
      await agentOf(ctx, request)
  } catch (error) {
    return error
  }
  return undefined
}

/**
 * The agent guard: resolves `agent` (its token and channel) from the bearer token before the
 * body is validated, so a stranger gets 401 whatever they send, and counts writes against the
 * channel's rate limit. Used by every agent route plugin; never repeated in a handler.
 */
export const agentAuth = (ctx: Ctx) =>
  new Elysia({ name: 'hark/agent-auth' }).derive({ as: 'scoped' }, async ({ request }) => ({
    agent: await agentOf(ctx, request),
  }))

/** The agent behind a request, with its write counted against the channel's limit. */
export async function agentOf(ctx: Ctx, request: Request): Promise<AgentAuth> {
  const agent = await authenticateAgent(ctx, request.headers.get('authorization') ?? undefined)
  if (WRITES.has(request.method)) {
    // Awaited only when it is a promise (the limit in Postgres): in memory it stays synchronous.
    const taken = ctx.limits.writes.take(agent.channel.id)
    if (taken) await taken
  }
  return agent
}

/** A resource's agent side: routes under `/v1`, each behind the agent guard. */
export const agentRoutes = (ctx: Ctx) => new Elysia({ prefix: '/v1' }).use(agentAuth(ctx))

/** Where a response's headers go: Elysia's `set`. */
interface ResponseHeaders {
  headers: Record<string, unknown>
}

/**
 * The person behind a `/v1/app/...` request: a person token in `Authorization`, else the session
 * cookie. Cookie-borne writes must come from the app's own origin (CSRF). When the session was
 * extended, the cookie is sent again with a fresh Max-Age through `set` (when given).
 */
export async function personOf(
  ctx: Ctx,
  request: Request,
  set?: ResponseHeaders,
): Promise<PersonAuth> {
  const person = await personBehind(ctx, request, set)
  // The same write limit as an agent's channel, for the person across all their clients: a
  // script with a person token must not be able to write without bound either.
  if (WRITES.has(request.method)) {
    const taken = ctx.limits.writes.take(`person:${person.user.id}`)
    if (taken) await taken
  }
  return person
}

async function personBehind(
  ctx: Ctx,
  request: Request,
  set?: ResponseHeaders,
): Promise<PersonAuth> {
  const header = request.headers.get('authorization')
  if (header) return await authenticatePerson(ctx, header)
  const found = await sessionFromCookie(ctx, request.headers.get('cookie'))
  if (!found) throw fail.unauthorized('log in first (no valid session or token)')
  if (WRITES.has(request.method)) checkOrigin(ctx, request)
  // A handler that sets its own cookie (logout) runs later and replaces this one.
  if (found.setCookie && set) set.headers['set-cookie'] = found.setCookie
  return { user: found.user, session: found.session }
}

/** The person guard for `/v1/app/...`. */
export const personAuth = (ctx: Ctx) =>
  new Elysia({ name: 'hark/person-auth' }).derive({ as: 'scoped' }, async ({ request, set }) => ({
    person: await personOf(ctx, request, set),
  }))

/**
 * The one rate-limit guard of the public routes (a transform hook, so it runs before the body
 * is read): `limiter` counts the request's client address, and past it the answer is 429 with
 * Retry-After, whatever was sent.
 */
export const limitedByAddress =
  (ctx: Ctx, limiter: RateLimiter) =>
  ({ request }: { request: Request }): void =>
    limiter.take(requestIp(ctx, request))

/** A resource's person side: routes under `/v1/app`, each behind the person guard. */
export const personRoutes = (ctx: Ctx) => new Elysia({ prefix: '/v1/app' }).use(personAuth(ctx))
