import { Elysia } from 'elysia'
import { authenticateAgent, authenticatePerson } from '../people/service.ts'
import type { Ctx } from './context.ts'
import { fail } from './errors.ts'

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Routes under /v1 that need no token; everything else there is guarded. */
const PUBLIC = new Set(['/v1/info', '/v1/openapi.json'])

/**
 * The authentication error a request would get from its route's guard, if any. Elysia parses a
 * JSON body before any guard runs, so a stranger sending malformed JSON would learn about the
 * body first; the error handler asks this so that 401/403 always outrank a parse error.
 */
export function authErrorFor(ctx: Ctx, request: Request): unknown {
  const path = new URL(request.url).pathname
  if (!path.startsWith('/v1/') || PUBLIC.has(path)) return undefined
  const header = request.headers.get('authorization') ?? undefined
  try {
    if (path.startsWith('/v1/app/')) authenticatePerson(ctx, header)
    else authenticateAgent(ctx, header)
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
  new Elysia({ name: 'hark/agent-auth' }).derive({ as: 'scoped' }, ({ headers, request }) => {
    const agent = authenticateAgent(ctx, headers.authorization)
    if (WRITES.has(request.method)) {
      const retryAfter = ctx.limiter.take(agent.channel.id)
      if (retryAfter > 0) throw fail.rateLimited(retryAfter)
    }
    return { agent }
  })

/** The person guard for `/v1/app/...`: a person token (sessions come with the web app). */
export const personAuth = (ctx: Ctx) =>
  new Elysia({ name: 'hark/person-auth' }).derive({ as: 'scoped' }, ({ headers }) => ({
    person: authenticatePerson(ctx, headers.authorization),
  }))
