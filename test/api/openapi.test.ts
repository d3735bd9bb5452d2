import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { validate } from '@readme/openapi-parser'
import openapiTS, { type OpenAPI3 } from 'openapi-typescript'
import { KnownBlocks } from '../../src/messages/schema.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'

/**
 * `GET /v1/openapi.json` is a document an agent author can generate a client from: a real
 * validator accepts it, every operation has a stable operationId, records and blocks are named
 * components, errors and security are documented, and types generated from it compile.
 */

interface Operation {
  operationId?: string
  parameters?: { name: string; in: string }[]
  requestBody?: unknown
  responses: Record<string, { $ref?: string }>
  security?: Record<string, string[]>[]
}
interface Spec {
  openapi: string
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, unknown>
    responses: Record<string, { content: Record<string, { schema: { $ref: string } }> }>
    securitySchemes: Record<string, { type: string; scheme?: string; in?: string }>
  }
}

let s: TestServer
let spec: Spec
let raw: string
beforeAll(async () => {
  s = await startTestServer()
  const res = await s.raw().raw('GET', '/v1/openapi.json')
  expect(res.status).toBe(200)
  raw = await res.text()
  spec = JSON.parse(raw) as Spec
})
afterAll(() => s?.close())

const operations = () =>
  Object.entries(spec.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, op })),
  )
const isPublic = (op: Operation) => Array.isArray(op.security) && op.security.length === 0

describe('the OpenAPI document', () => {
  test('is valid OpenAPI 3.1, as a real validator reads it', async () => {
    expect(spec.openapi).toMatch(/^3\.1\.\d+$/)
    // The validator resolves references in place: give it a copy.
    const result = await validate(JSON.parse(raw))
    if (!result.valid) throw new Error(JSON.stringify(result.errors, null, 2))
    expect(result.valid).toBe(true)
  })

  test('every operation has an operationId: camelCase, unique, named (not derived from the path)', () => {
    const ids = operations().map(({ op }) => op.operationId ?? '')
    expect(ids.length).toBeGreaterThan(60)
    for (const id of ids) {
      expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/)
      // Elysia's fallback is method + path (`postV1Messages`): every route names its own.
      expect(id).not.toMatch(/^(get|post|put|patch|delete)(V1|Health|Index)/)
    }
    expect(new Set(ids).size).toBe(ids.length)
    const id = (path: string, method: string) => spec.paths[path]?.[method]?.operationId
    expect(id('/v1/messages', 'post')).toBe('sendMessage')
    expect(id('/v1/messages', 'get')).toBe('readFeed')
    expect(id('/v1/asks/{id}', 'get')).toBe('getAsk')
    expect(id('/v1/pins/{key}', 'put')).toBe('putPin')
    expect(id('/v1/files', 'post')).toBe('uploadFile')
  })

  test('records and blocks are named components, referenced rather than inlined', () => {
    const names = Object.keys(spec.components.schemas)
    const blockNames = Object.keys(KnownBlocks).map(
      (type) => `${type.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())}Block`,
    )
    expect(blockNames).toContain('TextInputBlock')
    for (const name of [
      'Message',
      'MessageBody',
      'AskInfo',
      'AnswerProof',
      'DeletedMessage',
      'Block',
      'UnknownBlock',
      ...blockNames,
      'Pin',
      'FileInfo',
      'Channel',
      'ChannelSummary',
      'SendRequest',
      'EditRequest',
      'Error',
    ]) {
      expect(names).toContain(name)
    }
    // No `$id` left inline, and every `$ref` resolves.
    expect(raw).not.toContain('"$id"')
    for (const [, ref] of raw.matchAll(/"\$ref":"([^"]+)"/g)) {
      const [, kind, name] = ref?.match(/^#\/components\/(schemas|responses)\/(.+)$/) ?? []
      expect(kind && name ? spec.components[kind as 'schemas'][name] : undefined).toBeDefined()
    }
    const message = JSON.stringify(spec.components.schemas.Message)
    expect(message).toContain('"$ref":"#/components/schemas/AskInfo"')
    expect(message).toContain('"$ref":"#/components/schemas/MessageBody"')
    const block = JSON.stringify(spec.components.schemas.Block)
    for (const name of [...blockNames, 'UnknownBlock']) {
      expect(block).toContain(`"$ref":"#/components/schemas/${name}"`)
    }
    const send = spec.paths['/v1/messages']?.post?.requestBody
    expect(JSON.stringify(send)).toContain('"$ref":"#/components/schemas/SendRequest"')
  })

  test('errors are { error, field? }, named responses on the routes that give them', () => {
    expect(spec.components.schemas.Error).toMatchObject({
      type: 'object',
      required: ['error'],
      properties: { error: { type: 'string' }, field: { type: 'string' } },
    })
    const refs = {
      400: 'BadRequest',
      401: 'Unauthorized',
      403: 'Forbidden',
      404: 'NotFound',
      409: 'Conflict',
      413: 'PayloadTooLarge',
      429: 'TooManyRequests',
    }
    for (const name of Object.values(refs)) {
      const schema = spec.components.responses[name]?.content['application/json']?.schema
      expect(schema?.$ref).toBe('#/components/schemas/Error')
    }
    const has = (op: Operation, status: keyof typeof refs) =>
      expect(op.responses[status]?.$ref).toBe(`#/components/responses/${refs[status]}`)
    for (const { method, path, op } of operations()) {
      if (!isPublic(op)) for (const status of [400, 401, 403] as const) has(op, status)
      if (path.includes('{')) has(op, 404)
      if (op.requestBody) has(op, 413)
      if (!isPublic(op) && method !== 'get') has(op, 429)
      const agentWrite = !isPublic(op) && !path.startsWith('/v1/app/')
      if (agentWrite && ['post', 'put', 'patch'].includes(method)) {
        has(op, 409)
        expect(op.parameters?.some((p) => p.name === 'Idempotency-Key' && p.in === 'header')).toBe(
          true,
        )
      }
    }
    // Named on the routes whose own rules give them.
    has(spec.paths['/v1/app/messages/{id}/answer']?.post as Operation, 409)
    has(spec.paths['/v1/auth/email/start']?.post as Operation, 429)
  })

  test('security: the bearer token on agent routes, a person token or the session cookie on the app', () => {
    expect(spec.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' })
    expect(spec.components.securitySchemes.session).toMatchObject({ type: 'apiKey', in: 'cookie' })
    const security = (path: string, method: string) => spec.paths[path]?.[method]?.security
    expect(security('/v1/messages', 'post')).toEqual([{ bearer: [] }])
    expect(security('/v1/app/channels', 'get')).toEqual([{ bearer: [] }, { session: [] }])
    // A person token is 403 here (docs/decisions.md): only the browser session.
    expect(security('/v1/app/tokens', 'post')).toEqual([{ session: [] }])
    expect(security('/v1/info', 'get')).toEqual([])
    for (const { path, op } of operations()) {
      expect(op.security).toBeDefined()
      if (path.startsWith('/v1/app/')) expect(op.security?.length).toBeGreaterThan(0)
    }
  })
})

describe('a client generated from it', () => {
  test('compiles (openapi-typescript types, checked by tsc)', async () => {
    const dir = tempDir('hark-openapi-client-')
    try {
      const types = await openapiTS(JSON.parse(raw) as OpenAPI3)
      writeFileSync(join(dir, 'schema.d.ts'), types)
      writeFileSync(join(dir, 'usage.ts'), USAGE)
      const tsc = resolve(import.meta.dir, '../../node_modules/.bin/tsc')
      const proc = Bun.spawn(
        [
          tsc,
          '--noEmit',
          '--strict',
          '--target',
          'es2022',
          '--module',
          'esnext',
          '--moduleResolution',
          'bundler',
          '--lib',
          'es2022,dom',
          '--types',
          '',
          join(dir, 'usage.ts'),
        ],
        { cwd: dir, stdout: 'pipe', stderr: 'pipe', timeout: 50_000 },
      )
      const [out, err, code] = await Promise.all([
        new Response(proc.stdout).text(),
        new Response(proc.stderr).text(),
        proc.exited,
      ])
      if (code !== 0) throw new Error(`tsc failed (${code}):\n${out}${err}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }, 60_000)
})

/** What an agent author writes against the generated types: a small typed client. */
const USAGE = `
import type { components, operations, paths } from './schema'

type Schemas = components['schemas']
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never

async function call<P extends keyof paths, M extends keyof paths[P] & string>(
  base: string, token: string, method: M, path: P, body?: unknown,
): Promise<unknown> {
  const res = await fetch(base + String(path), {
    method: method.toUpperCase(),
    headers: { authorization: 'Bearer ' + token, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  if (!res.ok) {
    const failure: Schemas['Error'] = await res.json()
    throw new Error(failure.field ? failure.field + ': ' + failure.error : failure.error)
  }
  return res.json()
}

type SendBody = Json<NonNullable<operations['sendMessage']['requestBody']>>
type Sent = Json<operations['sendMessage']['responses'][200]>

export async function ask(base: string, token: string): Promise<Schemas['AskInfo'] | undefined> {
  const request: SendBody = {
    body: {
      title: 'Deploy?',
      blocks: [
        { type: 'markdown', text: 'Tests pass.' },
        { type: 'choice', id: 'go', options: [{ label: 'Yes' }, { label: 'No', danger: true }] },
        { type: 'some_future_block', anything: 1 },
      ],
    },
    expires_in: 600,
  }
  const sent = (await call(base, token, 'post', '/v1/messages', request)) as Sent
  const message: Schemas['Message'] = sent.message
  const id: string = message.id
  const state: 'seen' | 'working' | 'done' | null | undefined = message.state
  void id
  void state
  return message.ask
}

export function firstText(feed: Json<operations['readFeed']['responses'][200]>): string | undefined {
  for (const item of feed.messages) {
    if ('deleted' in item) continue
    for (const block of item.body.blocks ?? []) {
      if (block.type === 'markdown' && 'text' in block && typeof block.text === 'string') {
        return block.text
      }
    }
  }
  return undefined
}

const pin: Schemas['Pin'] | undefined = undefined
const file: Schemas['FileInfo'] = { file_id: 'file_1', name: 'a.txt', mime: 'text/plain', size: 1, created_at: 0 }
const channel: Schemas['Channel'] | undefined = undefined
const markdown: Schemas['MarkdownBlock'] = { type: 'markdown', text: 'hi' }
// @ts-expect-error a markdown block needs its text
const broken: Schemas['MarkdownBlock'] = { type: 'markdown' }
void [pin, file, channel, markdown, broken]
`
