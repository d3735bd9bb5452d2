import { Elysia } from 'elysia'
import { sessionRoutes } from '../access/sessions/routes.ts'
import { tokenRoutes } from '../access/tokens/routes.ts'
import { channelRoutes } from '../channels/routes.ts'
import type { Ctx } from '../core/context.ts'
import { pathOf } from '../core/http/front-door.ts'
import { parseJsonBody } from '../core/http/json-body.ts'
import { fileRoutes } from '../files/routes.ts'
import { policyRoutes } from '../messages/asks/policies/routes.ts'
import { askRoutes } from '../messages/asks/routes.ts'
import { personSecretRoutes, secretRoutes } from '../messages/asks/secrets/routes.ts'
import { channelListRoutes } from '../messages/channel-list/routes.ts'
import { messageRoutes } from '../messages/routes.ts'
import { searchRoutes } from '../messages/search/routes.ts'
import { emailRoutes } from '../people/enrol/email/routes.ts'
import { joinRoutes } from '../people/enrol/join-routes.ts'
import { passkeyRoutes } from '../people/enrol/passkeys/routes.ts'
import { pairingRoutes } from '../people/enrol/routes.ts'
import { peopleRoutes } from '../people/routes.ts'
import { pushAnswerRoutes, pushRoutes } from '../push/routes.ts'
import { showsNothingStored, whenDurable } from './durable.ts'
import { leanRoute } from './lean.ts'
import { metricsRoutes } from './metrics.ts'
import { openApiRoutes } from './openapi.ts'
import { publicRoutes } from './public-routes.ts'
import { renderError } from './render-error.ts'

/** The server's request handler: the lean long-poll routes, then the Elysia app. */
export function handlerOf(ctx: Ctx, app: App): (request: Request) => Promise<Response> {
  // The lean path's answers say no-store themselves (`jsonResponse`, `errorResponse`): a held
  // poll is not wrapped in one more async step, which 10,000 of them would pay for in memory.
  return (request) => {
    const lean = leanRoute(ctx, request)
    if (lean) return lean
    if (showsNothingStored(request)) return app.handle(request)
    return app
      .handle(request)
      .then((response) => whenDurable(ctx, request, noStore(request, response)))
  }
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
      .onError({ as: 'global' }, async ({ code, error, request, route }) => {
        // A guard may refuse before the route's transform ran: the route is named here too.
        if (route && !ctx.metrics.routes.has(request)) ctx.metrics.routes.set(request, route)
        return await renderError(ctx, request, error, code)
      })
      // Every JSON body, on every route, goes through the one bounded parser (json-body.ts). It
      // always answers, so Elysia's own JSON parser named next never runs: it is there for the
      // OpenAPI document, which takes a route's media type from the parsers it has by name.
      .onParse({ as: 'global' }, [parseBody, ELYSIA_JSON])
      // The route a request matched names it in the log and the metrics (bounded labels).
      .onTransform({ as: 'global' }, ({ request, route }) => {
        ctx.metrics.routes.set(request, route)
      })
      .use(openApiRoutes(ctx))
      .use(publicRoutes(ctx))
      .use(messageRoutes(ctx))
      .use(askRoutes(ctx))
      .use(fileRoutes(ctx))
      .use(channelRoutes(ctx))
      .use(channelListRoutes(ctx))
      .use(searchRoutes(ctx))
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
      .use(policyRoutes(ctx))
      .use(ctx.config.metrics ? metricsRoutes(ctx) : new Elysia({ name: 'hark/no-metrics' }))
  )
}

export type App = ReturnType<typeof buildApp>
