import { type AgentAuth, authenticateAgent } from '../access/tokens/service.ts'
import type { Ctx } from '../core/context.ts'
import { agentAsk } from '../messages/asks/routes.ts'
import { agentFeed } from '../messages/routes.ts'
import { whenDurable } from './durable.ts'
import { renderError } from './render-error.ts'

/** What a lean route may read from the query string, by route. */
const FEED_QUERY = new Set(['since', 'wait', 'sender', 'peek', 'limit'])
const ASK_QUERY = new Set(['wait'])

/**
 * The query of a lean request as Elysia would give it, or undefined when it holds anything
 * Elysia treats specially (escapes, `+`, a key the route does not take, which Elysia refuses
 * with a 400): such a request goes to Elysia.
 */
function plainQuery(
  url: string,
  at: number,
  allowed: Set<string>,
): Record<string, string> | undefined {
  const query: Record<string, string> = {}
  if (at === -1) return query
  const text = url.slice(at + 1)
  if (!/^[\w.=&-]*$/.test(text)) return undefined
  for (const part of text.split('&')) {
    if (part === '') continue
    const eq = part.indexOf('=')
    const key = eq === -1 ? part : part.slice(0, eq)
    if (!allowed.has(key)) return undefined
    query[key] = eq === -1 ? '' : part.slice(eq + 1)
  }
  return query
}

/**
 * The long-poll GETs (`/v1/messages`, `/v1/asks/:id`) served before Elysia: these are the
 * requests held by the thousand, and Elysia's per-request context, hooks and promise chain are
 * most of what a held request costs (docs/decisions.md, "Server"). Same guard, same parsing,
 * same handler (`agentFeed`, `agentAsk`), same error rendering; anything unusual in the path or
 * query is left to Elysia. Undefined: not a lean request.
 */
export function leanRoute(ctx: Ctx, request: Request): Promise<Response> | undefined {
  if (request.method !== 'GET') return undefined
  const url = request.url
  const start = url.indexOf('/', url.indexOf('//') + 2)
  const at = url.indexOf('?', start)
  const path = at === -1 ? url.slice(start) : url.slice(start, at)
  if (path === '/v1/messages') {
    const query = plainQuery(url, at, FEED_QUERY)
    if (!query) return undefined
    ctx.metrics.routes.set(request, '/v1/messages')
    return lean(ctx, request, (agent) => agentFeed(ctx, agent, query, request))
  }
  if (path.startsWith('/v1/asks/') && /^\/v1\/asks\/[\w-]+$/.test(path)) {
    const query = plainQuery(url, at, ASK_QUERY)
    if (!query) return undefined
    const id = path.slice('/v1/asks/'.length)
    ctx.metrics.routes.set(request, '/v1/asks/:id')
    return lean(ctx, request, (agent) => agentAsk(ctx, agent, id, query, request))
  }
  return undefined
}

/**
 * The guard, the handler, durability and errors as one chain of `then`s, not an async function:
 * a held poll waits through it, and an async frame is memory every held poll pays for.
 */
function lean(
  ctx: Ctx,
  request: Request,
  handle: (agent: AgentAuth) => Promise<Response>,
): Promise<Response> {
  // `whenDurable` never throws (a failed flush is its own error answer), so one `then` with both
  // callbacks catches what the guard and the handler throw.
  return authenticateAgent(ctx, request.headers.get('authorization') ?? undefined)
    .then(handle)
    .then(
      (response) => whenDurable(ctx, request, response),
      (error: unknown) => renderError(ctx, request, error),
    )
}
