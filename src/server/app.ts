import { openapi } from '@elysiajs/openapi'
import { Elysia, ValidationError } from 'elysia'
import { emailRoutes } from '../access/email/routes.ts'
import { joinRoutes } from '../access/enrol/join-routes.ts'
import { pairingRoutes } from '../access/enrol/routes.ts'
import { authErrorFor } from '../access/guards.ts'
import { passkeyRoutes } from '../access/passkeys/routes.ts'
import { sessionRoutes } from '../access/sessions/routes.ts'
import { tokenRoutes } from '../access/tokens/routes.ts'
import { type AgentAuth, authenticateAgent } from '../access/tokens/service.ts'
import { agentAsk, askRoutes } from '../asks/routes.ts'
import { personSecretRoutes, secretRoutes } from '../asks/secrets/routes.ts'
import { channelRoutes } from '../channels/routes.ts'
import { errorResponse, HarkError, pointerToField } from '../core/errors.ts'
import { pathOf } from '../core/http/front-door.ts'
import { BodyError, parseJsonBody } from '../core/http/json-body.ts'
import { VERSION } from '../core/version.ts'
import { fileRoutes } from '../files/routes.ts'
import { agentFeed, messageRoutes } from '../messages/routes.ts'
import { peopleRoutes } from '../people/routes.ts'
import { pushAnswerRoutes, pushRoutes } from '../push/routes.ts'
import type { Ctx } from './context.ts'
import { publicRoutes } from './public-routes.ts'

/** Elysia reports validation failures as 422 with the input echoed; we answer 400 naming the field. */
function validationResponse(error: ValidationError): Response {
  const first = error.valueError
  const where = error.type === 'body' ? '' : `${error.type} `
  const field = first ? pointerToField(first.path) : ''
  const message =
    first?.message.replace(/^Expected required property$/, 'is required') ?? 'is invalid'
  if (!field) return errorResponse(400, `${where || 'request body '}${message.toLowerCase()}`)
  return errorResponse(
    400,
    `${field}: ${message.charAt(0).toLowerCase()}${message.slice(1)}`,
    field,
  )
}

/**
 * Every failure of a request as its answer, `{ "error": "...", "field"?: "..." }`: for Elysia's
 * `onError` (which gives its own `code`) and for the lean path.
 */
export function renderError(ctx: Ctx, request: Request, error: unknown, code?: unknown): Response {
  if (error instanceof HarkError) {
    return errorResponse(error.status, error.message, error.field, error.headers)
  }
  if (error instanceof ValidationError) return validationResponse(error)
  // Elysia formats a failed value with `${value}`, which throws on an object whose
  // `toString` is not a function (`{"text": {"toString": 0}}`, found by test/fuzz): the
  // request still failed validation, so it is a 400, not a 500.
  if (error instanceof TypeError && error.stack?.includes('new ValidationError')) {
    return errorResponse(400, 'request body: a value has the wrong type')
  }
  switch (code) {
    case 'PARSE': {
      const denied = authErrorFor(ctx, request)
      if (denied instanceof HarkError) {
        return errorResponse(denied.status, denied.message, denied.field, denied.headers)
      }
      // Our parser's refusal (size, depth, encoding, media type) comes wrapped in Elysia's.
      const cause = (error as Error).cause
      if (cause instanceof BodyError) return errorResponse(cause.status, cause.message)
      return errorResponse(400, 'request body is not valid JSON')
    }
    case 'NOT_FOUND':
      return errorResponse(404, `no route ${request.method} ${pathOf(request.url)}`)
    case 'INVALID_COOKIE_SIGNATURE':
      return errorResponse(401, 'invalid session')
  }
  ctx.log.error(`${request.method} ${pathOf(request.url)}: ${(error as Error)?.stack ?? error}`)
  return errorResponse(500, 'internal error')
}

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
    return lean(ctx, request, (agent) => agentFeed(ctx, agent, query, request))
  }
  if (path.startsWith('/v1/asks/') && /^\/v1\/asks\/[\w-]+$/.test(path)) {
    const query = plainQuery(url, at, ASK_QUERY)
    if (!query) return undefined
    const id = path.slice('/v1/asks/'.length)
    return lean(ctx, request, (agent) => agentAsk(ctx, agent, id, query, request))
  }
  return undefined
}

async function lean(
  ctx: Ctx,
  request: Request,
  handle: (agent: AgentAuth) => Promise<Response>,
): Promise<Response> {
  try {
    return await handle(authenticateAgent(ctx, request.headers.get('authorization') ?? undefined))
  } catch (error) {
    return renderError(ctx, request, error)
  }
}

/** The server's request handler: the lean long-poll routes, then the Elysia app. */
export function handlerOf(ctx: Ctx, app: App): (request: Request) => Promise<Response> {
  return async (request) => noStore(request, await (leanRoute(ctx, request) ?? app.handle(request)))
}

/**
 * API answers carry messages, tokens and answers: no cache may keep them (a shared computer's
 * browser, a proxy). A route that says otherwise keeps its word: file downloads are immutable
 * by id and `private` (only the person's own browser keeps them, so images are not fetched
 * again on every open).
 */
function noStore(request: Request, response: Response): Response {
  if (!pathOf(request.url).startsWith('/v1/') || response.headers.has('cache-control')) {
    return response
  }
  try {
    response.headers.set('cache-control', 'no-store')
    return response
  } catch {
    // Immutable headers (a redirect): answer a copy.
    const copy = new Response(response.body, response)
    copy.headers.set('cache-control', 'no-store')
    return copy
  }
}

type BodyParser = (context: { request: Request; contentType: string }) => Promise<unknown>
const parseBody: BodyParser = ({ request, contentType }) => parseJsonBody(request, contentType)
/** Elysia's built-in JSON parser by its name (Elysia takes names where its types say functions). */
const ELYSIA_JSON = 'application/json' as unknown as BodyParser

/** Builds the whole HTTP API from its dependencies. It never listens: `serve.ts` does. */
export function buildApp(ctx: Ctx) {
  return (
    new Elysia({ normalize: false })
      .onError({ as: 'global' }, ({ code, error, request }) =>
        renderError(ctx, request, error, code),
      )
      // Every JSON body, on every route, goes through the one bounded parser (json-body.ts). It
      // always answers, so Elysia's own JSON parser named next never runs: it is there for the
      // OpenAPI document, which takes a route's media type from the parsers it has by name.
      .onParse({ as: 'global' }, [parseBody, ELYSIA_JSON])
      .use(
        openapi({
          path: '/v1/openapi',
          specPath: '/v1/openapi.json',
          provider: null,
          documentation: {
            info: {
              title: 'Hark',
              version: VERSION,
              description:
                'A message channel between automated agents and the person they work for.',
            },
            components: {
              securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
            },
            security: [{ bearer: [] }],
          },
        }),
      )
      .use(publicRoutes(ctx))
      .use(messageRoutes(ctx))
      .use(askRoutes(ctx))
      .use(fileRoutes(ctx))
      .use(channelRoutes(ctx))
      .use(emailRoutes(ctx))
      .use(passkeyRoutes(ctx))
      .use(peopleRoutes(ctx))
      .use(sessionRoutes(ctx))
      .use(tokenRoutes(ctx))
      .use(pairingRoutes(ctx))
      .use(joinRoutes(ctx))
      .use(pushRoutes(ctx))
      .use(pushAnswerRoutes(ctx))
      .use(secretRoutes(ctx))
      .use(personSecretRoutes(ctx))
  )
}

export type App = ReturnType<typeof buildApp>
