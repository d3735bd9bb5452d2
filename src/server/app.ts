import { openapi } from '@elysiajs/openapi'
import { Elysia, ValidationError } from 'elysia'
import { askRoutes } from '../asks/routes.ts'
import { channelRoutes } from '../channels/routes.ts'
import { emailRoutes } from '../email/routes.ts'
import { fileRoutes } from '../files/routes.ts'
import { joinRoutes } from '../join/routes.ts'
import { messageRoutes } from '../messages/routes.ts'
import { pairingRoutes } from '../pairing/routes.ts'
import { passkeyRoutes } from '../passkeys/routes.ts'
import { peopleRoutes } from '../people/routes.ts'
import { personRoutes } from '../person/routes.ts'
import { pinRoutes } from '../pins/routes.ts'
import { pushAnswerRoutes, pushRoutes } from '../push/routes.ts'
import { personSecretRoutes, secretRoutes } from '../secrets/routes.ts'
import { sessionRoutes } from '../sessions/routes.ts'
import { tokenRoutes } from '../tokens/routes.ts'
import { VERSION } from '../version.ts'
import { authErrorFor } from './auth.ts'
import type { Ctx } from './context.ts'
import { errorResponse, HarkError, pointerToField } from './errors.ts'
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

/** Builds the whole HTTP API from its dependencies. It never listens: `serve.ts` does. */
export function buildApp(ctx: Ctx) {
  return new Elysia({ normalize: false })
    .onError({ as: 'global' }, ({ code, error, request }) => {
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
          return errorResponse(400, 'request body is not valid JSON')
        }
        case 'NOT_FOUND':
          return errorResponse(404, `no route ${request.method} ${new URL(request.url).pathname}`)
        case 'INVALID_COOKIE_SIGNATURE':
          return errorResponse(401, 'invalid session')
      }
      ctx.log.error(
        `${request.method} ${new URL(request.url).pathname}: ${(error as Error)?.stack ?? error}`,
      )
      return errorResponse(500, 'internal error')
    })
    .use(
      openapi({
        path: '/v1/openapi',
        specPath: '/v1/openapi.json',
        provider: null,
        documentation: {
          info: {
            title: 'Hark',
            version: VERSION,
            description: 'A message channel between automated agents and the person they work for.',
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
    .use(pinRoutes(ctx))
    .use(fileRoutes(ctx))
    .use(channelRoutes(ctx))
    .use(personRoutes(ctx))
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
}

export type App = ReturnType<typeof buildApp>
