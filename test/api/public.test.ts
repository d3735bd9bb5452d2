import { afterEach, describe, expect, test } from 'bun:test'
import { VERSION } from '../../src/core/version.ts'
import { addUser } from '../../src/people/service.ts'
import { startTestServer, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

interface OpenApi {
  openapi: string
  info: { title: string; version: string }
  paths: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> }
}
interface Operation {
  requestBody?: { content: Record<string, { schema: JsonSchema }> }
  responses: Record<string, { content?: Record<string, { schema: JsonSchema }> }>
  parameters?: { name: string; in: string }[]
  security?: unknown[]
}
interface JsonSchema {
  type?: string
  $ref?: string
  required?: string[]
  properties?: Record<string, JsonSchema>
}

/** Resolves a `$ref` into `components.schemas`, or returns the inline schema. */
function resolve(spec: OpenApi, schema: JsonSchema): JsonSchema {
  if (!schema.$ref) return schema
  const name = schema.$ref.replace('#/components/schemas/', '')
  return spec.components?.schemas?.[name] as JsonSchema
}

async function openapi(): Promise<OpenApi> {
  const res = await s.raw().raw('GET', '/v1/openapi.json')
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toContain('application/json')
  return (await res.json()) as OpenApi
}

describe('GET /health', () => {
  test('answers { ok: true } without a token', async () => {
    s = await startTestServer()
    const res = await s.raw().raw('GET', '/health')
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(await res.json()).toEqual({ ok: true })
  })

  test('ignores any token, even a bad one', async () => {
    s = await startTestServer()
    expect(await s.raw('garbage').health()).toEqual({ ok: true })
    expect(await s.agent.health()).toEqual({ ok: true })
  })

  test('is outside /v1: /v1/health is 404', async () => {
    s = await startTestServer()
    expect((await s.raw().raw('GET', '/v1/health')).status).toBe(404)
  })
})

describe('GET /v1/info', () => {
  test('answers name, version, needs_setup, registration and features without a token', async () => {
    s = await startTestServer()
    const info = await s.raw().info()
    expect(info).toEqual({
      name: 'Hark',
      version: VERSION,
      base_url: 'http://hark.test',
      needs_setup: false,
      registration: 'closed',
      features: { files: true, push: true, passkeys: true, email: false },
      vapid_public_key: expect.stringMatching(/^[A-Za-z0-9_-]{87}$/),
    })
    for (const flag of Object.values(info.features)) expect(typeof flag).toBe('boolean')
    expect(['closed', 'invite', 'open']).toContain(info.registration)
  })

  test('needs_setup is true on a fresh server with no owner, and false once there is one', async () => {
    s = await startTestServer({ owner: false })
    const before = await s.request('GET', '/v1/info')
    expect(before.status).toBe(200)
    expect(before.body.needs_setup).toBe(true)
    // A person who is not the owner does not complete setup.
    await addUser(s.ctx, { email: 'someone@example.com' })
    expect((await s.request('GET', '/v1/info')).body.needs_setup).toBe(true)
    await addUser(s.ctx, { email: 'owner@example.com', owner: true })
    expect((await s.request('GET', '/v1/info')).body.needs_setup).toBe(false)
  })

  test('needs_setup turns true again when the owner is removed', async () => {
    s = await startTestServer()
    s.ctx.db.run('DELETE FROM users')
    expect((await s.raw().info()).needs_setup).toBe(true)
    // Their tokens went with them.
    await s.agent.channel().then(
      () => {
        throw new Error('expected 401')
      },
      (e: { status: number }) => expect(e.status).toBe(401),
    )
  })

  test('health and info answer on a fresh server too', async () => {
    s = await startTestServer({ owner: false })
    expect((await s.request('GET', '/health')).body).toEqual({ ok: true })
    expect((await s.request('GET', '/v1/info')).status).toBe(200)
  })
})

describe('GET /v1/openapi.json', () => {
  test('is an OpenAPI 3 document naming Hark and its version', async () => {
    s = await startTestServer()
    const spec = await openapi()
    expect(spec.openapi).toMatch(/^3\.\d+\.\d+$/)
    expect(spec.info.title).toBe('Hark')
    expect(spec.info.version).toBe(VERSION)
    expect(spec.components?.securitySchemes).toHaveProperty('bearer')
  })

  test('lists every route with its methods', async () => {
    s = await startTestServer()
    const { paths } = await openapi()
    const expected: Record<string, string[]> = {
      '/health': ['get'],
      '/v1/info': ['get'],
      '/v1/messages': ['get', 'post'],
      '/v1/messages/{id}': ['delete', 'patch', 'put'],
      '/v1/messages/{id}/state': ['post'],
      '/v1/messages/{id}/cancel': ['post'],
      '/v1/asks': ['get'],
      '/v1/asks/{id}': ['get'],
      '/v1/pins': ['get'],
      '/v1/pins/{key}': ['delete', 'patch', 'put'],
      '/v1/files': ['post'],
      '/v1/files/{id}': ['get'],
      '/v1/channel': ['get'],
      '/v1/agent': ['patch'],
      '/v1/app/channels': ['get'],
      '/v1/app/channels/{id}/messages': ['get', 'post'],
      '/v1/app/messages/{id}/answer': ['post'],
      '/v1/app/asks': ['get'],
    }
    for (const [path, methods] of Object.entries(expected)) {
      expect(paths[path]).toBeDefined()
      expect(Object.keys(paths[path] ?? {}).sort()).toEqual(methods)
    }
    // The web app's shell and the docs themselves are not API routes.
    expect(paths['/']).toBeUndefined()
    expect(paths['/v1/openapi.json']).toBeUndefined()
  })

  test('is generated from the schemas: the send request requires body', async () => {
    s = await startTestServer()
    const spec = await openapi()
    const send = spec.paths['/v1/messages']?.post
    const schema = resolve(
      spec,
      send?.requestBody?.content['application/json']?.schema as JsonSchema,
    )
    expect(schema.type).toBe('object')
    expect(schema.required).toContain('body')
    const body = resolve(spec, schema.properties?.body as JsonSchema)
    expect(Object.keys(body.properties ?? {})).toEqual(
      expect.arrayContaining(['title', 'text', 'blocks']),
    )
    expect(schema.properties).toHaveProperty('silent')
    expect(schema.properties).toHaveProperty('expires_in')
  })

  test('documents the answers: message, pin, channel, file', async () => {
    s = await startTestServer()
    const spec = await openapi()
    const ok = (path: string, method: string) =>
      resolve(
        spec,
        spec.paths[path]?.[method]?.responses['200']?.content?.['application/json']
          ?.schema as JsonSchema,
      )
    expect(ok('/v1/messages', 'post').required).toContain('message')
    expect(ok('/v1/pins/{key}', 'put').required).toContain('pin')
    expect(ok('/v1/pins', 'get').required).toContain('pins')
    expect(ok('/v1/channel', 'get').required).toContain('channel')
    expect(ok('/v1/files', 'post').required).toEqual(
      expect.arrayContaining(['file_id', 'name', 'mime', 'size']),
    )
    expect(ok('/v1/messages', 'get').required).toEqual(
      expect.arrayContaining(['messages', 'cursor']),
    )
  })

  test('documents the raw upload body and its ?name= parameter', async () => {
    s = await startTestServer()
    const spec = await openapi()
    const upload = spec.paths['/v1/files']?.post
    expect(upload?.parameters?.some((p) => p.name === 'name' && p.in === 'query')).toBe(true)
    const content = upload?.requestBody?.content ?? {}
    const binary = Object.values(content)[0]?.schema as JsonSchema & { format?: string }
    expect(binary?.type).toBe('string')
    expect(binary?.format).toBe('binary')
  })

  test('public routes need no token; the rest name bearer security', async () => {
    s = await startTestServer()
    const spec = await openapi()
    expect(spec.paths['/health']?.get?.security).toEqual([])
    expect(spec.paths['/v1/info']?.get?.security).toEqual([])
    expect(spec.paths['/v1/messages']?.post?.security).toEqual([{ bearer: [] }])
  })

  test('needs no token', async () => {
    s = await startTestServer()
    expect((await s.raw('garbage').raw('GET', '/v1/openapi.json')).status).toBe(200)
  })
})

describe('unknown routes', () => {
  test('are 404 with a JSON { error }', async () => {
    s = await startTestServer()
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v1/nope'],
      ['GET', '/v2/messages'],
      ['POST', '/v1/channel'],
      ['DELETE', '/v1/agent'],
      ['GET', '/v1/messages/x/y/z'],
      ['PUT', '/health'],
    ] as const) {
      const res = await s.agent.raw(method, path)
      expect(res.status).toBe(404)
      expect(res.headers.get('content-type')).toContain('application/json')
      const body = (await res.json()) as { error: unknown }
      expect(typeof body.error).toBe('string')
      expect(body.error as string).toContain(path)
    }
  })

  test('are 404 without a token too', async () => {
    s = await startTestServer()
    const res = await s.raw().raw('GET', '/v1/definitely-not-here')
    expect(res.status).toBe(404)
    expect(typeof ((await res.json()) as { error: unknown }).error).toBe('string')
  })
})
