import { toOpenAPISchema } from '@elysiajs/openapi'
import { Elysia } from 'elysia'
import { cookieName } from '../access/sessions/service.ts'
import type { Ctx } from '../core/context.ts'
import { openApiDocument } from '../core/openapi-document.ts'
import { VERSION } from '../core/version.ts'
import { DocumentedBlock } from '../messages/block-docs.ts'

/**
 * `GET /v1/openapi.json`: the OpenAPI document of every route the app has, generated from their
 * schemas and `doc()` details by Elysia's generator, then finished (`openApiDocument`): named
 * component schemas, error responses, security. Built once, on the first request (every route
 * is in place by then: `buildApp` adds them all at once); anyone may read it.
 */
export const openApiRoutes = (ctx: Ctx) => {
  const plugin = new Elysia({ name: 'hark/openapi' })
  let built: object | undefined
  const document = () => {
    built ??= openApiDocument({
      info: {
        title: 'Hark',
        version: VERSION,
        description: 'A message channel between automated agents and the person they work for.',
      },
      paths: toOpenAPISchema(plugin).paths,
      named: [DocumentedBlock],
      cookie: cookieName(ctx),
    })
    return built
  }
  return plugin.get('/v1/openapi.json', document, { detail: { hide: true } })
}
