import { afterEach, describe, expect, test } from 'bun:test'
import {
  MAX_JSON_CONTAINERS,
  MAX_JSON_DEPTH,
  MAX_JSON_MEMBERS,
} from '../../src/core/http/json-body.ts'
import { BASE, startTestServer, type TestServer } from '../harness.ts'
import { databaseImage, nested } from './util.ts'

/**
 * Finding 1 of the attack pass: a body of deeply nested brackets held the event loop for seconds
 * (Elysia rendered the whole value into its validation error; block and answer checks recursed)
 * and ended in a 500 past ~50,000 levels. Every route that takes a body is tried here, found from
 * the app's own route table so that a route added later is tried too.
 */

let s: TestServer
afterEach(() => s?.close())

interface Route {
  method: string
  path: string
}

/** Every route that reads a JSON body (not GET, not the raw-byte uploads), with the token it needs. */
function bodyRoutes(server: TestServer): Route[] {
  return server.app.routes
    .filter((r) => r.method !== 'GET' && r.method !== 'HEAD' && !r.path.endsWith('/files'))
    .map((r) => ({ method: r.method, path: r.path.replace(/:\w+/g, 'x') }))
}

function tokenFor(server: TestServer, path: string): string | undefined {
  if (path.startsWith('/v1/app/')) return server.personToken
  if (/^\/v1\/(messages|asks|pins|files|channel|agent|secrets)\b/.test(path))
    return server.agentToken
  return undefined
}

async function send(
  server: TestServer,
  route: Route,
  body: BodyInit,
  contentType = 'application/json',
): Promise<{ status: number; text: string }> {
  const { status, text } = await server.request(route.method, route.path, {
    body,
    token: tokenFor(server, route.path),
    headers: { 'content-type': contentType },
    origin: null,
  })
  return { status, text }
}

describe('every route that takes a body', () => {
  test('the harness knows every route and holds a token for each side', async () => {
    s = await startTestServer()
    const routes = bodyRoutes(s)
    expect(routes.length).toBeGreaterThan(40)
    expect(tokenFor(s, '/v1/messages')).toStartWith('hark_agent_')
    expect(tokenFor(s, '/v1/app/tokens')).toStartWith('hark_person_')
  })

  for (const depth of [MAX_JSON_DEPTH + 1, 20_000, 100_000]) {
    test(`${depth} levels of nesting: 400 naming the limit, nothing written, nothing echoed`, async () => {
      s = await startTestServer()
      const body = `{"label":"x","body":{"text":"x"},"answer":${nested(depth)},"v":${nested(depth)}}`
      const before = databaseImage(s.ctx.db)
      for (const route of bodyRoutes(s)) {
        const { status, text } = await send(s, route, body)
        expect({ route, status }).toEqual({ route, status: 400 })
        expect(JSON.parse(text)).toEqual({
          error: `request body nests deeper than ${MAX_JSON_DEPTH} levels`,
        })
      }
      expect(databaseImage(s.ctx.db)).toBe(before)
    })
  }

  test('a stranger still gets 401 on an agent route, however the body is built', async () => {
    s = await startTestServer()
    const response = await s.request('POST', '/v1/messages', {
      headers: { 'content-type': 'application/json' },
      body: nested(50_000),
      origin: null,
    })
    expect(response.status).toBe(401)
  })

  test('invalid UTF-8 is refused with 400, not stored as U+FFFD', async () => {
    s = await startTestServer()
    const head = new TextEncoder().encode('{"body":{"text":"caf')
    const tail = new TextEncoder().encode('"},"label":"x","answer":true}')
    const bytes = new Uint8Array([...head, 0xff, 0xfe, ...tail])
    const before = databaseImage(s.ctx.db)
    for (const route of bodyRoutes(s)) {
      const { status, text } = await send(s, route, bytes)
      expect({ route, status }).toEqual({ route, status: 400 })
      expect(JSON.parse(text)).toEqual({ error: 'request body is not valid UTF-8' })
    }
    expect(databaseImage(s.ctx.db)).toBe(before)
  })

  test('a lone surrogate escape (not Unicode) is refused with 400', async () => {
    s = await startTestServer()
    const before = databaseImage(s.ctx.db)
    for (const route of bodyRoutes(s)) {
      const { status, text } = await send(s, route, '{"body":{"text":"a\\ud800b"},"label":"x"}')
      expect({ route, status }).toEqual({ route, status: 400 })
      expect(JSON.parse(text).error).toBe('request body holds a string that is not valid Unicode')
    }
    expect(databaseImage(s.ctx.db)).toBe(before)
  })

  test('multipart, form and text bodies on JSON routes: 415, nothing written', async () => {
    s = await startTestServer()
    const before = databaseImage(s.ctx.db)
    const form = new FormData()
    form.set('body', '{"text":"hi"}')
    form.set('label', 'x')
    for (const route of bodyRoutes(s)) {
      const multipart = new Request(`${BASE}${route.path}`, { method: 'POST', body: form })
      const contentType = multipart.headers.get('content-type') ?? ''
      const bytes = new Uint8Array(await multipart.arrayBuffer())
      for (const [type, body] of [
        [contentType, bytes],
        ['application/x-www-form-urlencoded', 'label=x&body=y'],
        ['text/plain', '{"body":{"text":"hi"},"label":"x"}'],
      ] as const) {
        const { status, text } = await send(s, route, body, type)
        expect({ route, type, status }).toEqual({ route, type, status: 415 })
        expect(JSON.parse(text).error).toStartWith('request body must be JSON')
      }
    }
    expect(databaseImage(s.ctx.db)).toBe(before)
  })

  test('the refusal never repeats what was sent', async () => {
    s = await startTestServer()
    const marker = 'CANARY-9f1c'
    const route = { method: 'POST', path: '/v1/messages' }
    for (const body of [
      `{"body":{"text":"${marker}"},"v":${nested(40)}}`,
      `{"body":{"text":{"${marker}":1}}}`,
      `{"body":{"title":1,"blocks":[{"type":"text","text":"${marker}"}]}}`,
      `{"body":{"text":"x","blocks":[{"type":"text","text":"${marker}"}]},"v":"\ud800"}`,
      `{"${marker}`,
    ]) {
      const { status, text } = await send(s, route, body)
      expect(status).toBe(400)
      expect(text).not.toContain(marker)
      expect(text.length).toBeLessThan(300)
    }
    const typed = await send(s, route, '{}', `application/${marker}`)
    expect(typed.status).toBe(415)
    expect(typed.text).not.toContain(marker)
  })

  test('an unknown key is named, cut short when long', async () => {
    s = await startTestServer()
    const key = `k${'x'.repeat(100_000)}`
    const { status, text } = await send(
      s,
      { method: 'POST', path: '/v1/messages' },
      JSON.stringify({ body: { text: 'hi' }, [key]: 1 }),
    )
    expect(status).toBe(400)
    expect(JSON.parse(text).field).toBe(`${key.slice(0, 64)}…`)
    expect(text.length).toBeLessThan(300)
  })
})

describe('bodies built of too many pieces', () => {
  test(`more than ${MAX_JSON_CONTAINERS} arrays and objects: 400, nothing written`, async () => {
    s = await startTestServer()
    const before = databaseImage(s.ctx.db)
    const body = `{"body":{"text":"x"},"v":[${Array(MAX_JSON_CONTAINERS).fill('[]').join(',')}]}`
    const { status, text } = await send(s, { method: 'POST', path: '/v1/messages' }, body)
    expect(status).toBe(400)
    expect(JSON.parse(text).error).toBe(
      `request body has more than ${MAX_JSON_CONTAINERS} arrays and objects`,
    )
    expect(databaseImage(s.ctx.db)).toBe(before)
  })

  test(`more than ${MAX_JSON_MEMBERS} object members: 400, nothing written`, async () => {
    s = await startTestServer()
    const before = databaseImage(s.ctx.db)
    const keys = Array.from({ length: MAX_JSON_MEMBERS }, (_, i) => `"k${i}":0`).join(',')
    const body = `{"body":{"text":"x"},"v":{${keys}}}`
    const { status, text } = await send(s, { method: 'POST', path: '/v1/messages' }, body)
    expect(status).toBe(400)
    expect(JSON.parse(text).error).toBe(
      `request body has more than ${MAX_JSON_MEMBERS} object members`,
    )
    expect(databaseImage(s.ctx.db)).toBe(before)
  })

  test('a message at its own limits passes: 100 choices of 50 options, a 5,000-row table', async () => {
    s = await startTestServer()
    const choices = Array.from({ length: 99 }, (_, b) => ({
      type: 'choice',
      id: `c${b}`,
      options: Array.from({ length: 50 }, (_, o) => ({ label: `o${o}`, value: `${o}` })),
    }))
    const table = {
      type: 'table',
      columns: ['n', 'square'],
      rows: Array.from({ length: 5000 }, (_, r) => [r, r * r]),
    }
    const many = await s.agent.send({ body: { blocks: choices } } as never)
    expect(many.message.body.blocks).toHaveLength(99)
    const big = await s.agent.send({ body: { blocks: [table] } } as never)
    expect(big.message.body.blocks).toHaveLength(1)
  })
})

describe('nesting within the limit still works', () => {
  test(`an html answer nested ${MAX_JSON_DEPTH - 2} deep is accepted and returned as sent`, async () => {
    s = await startTestServer()
    const { message } = await s.agent.send({
      body: { blocks: [{ type: 'html', id: 'h', html: '<p>pick</p>', question: true }] },
    })
    // {"answer": [[…]]}: the outer object is one level, the answer the rest.
    const answer = JSON.parse(nested(MAX_JSON_DEPTH - 1))
    const response = await s.request('POST', `/v1/app/messages/${message.id}/answer`, {
      token: s.personToken,
      json: { answer },
      origin: null,
    })
    expect(response.status).toBe(200)
    expect(response.body.answer).toEqual(answer)
  })

  test('brackets and escaped quotes inside strings do not count as nesting', async () => {
    s = await startTestServer()
    const text = `\\"${'['.repeat(5000)}{{{\\\\`
    const { status } = await send(
      s,
      { method: 'POST', path: '/v1/messages' },
      `{"body":{"text":"${text}"}}`,
    )
    expect(status).toBe(200)
  })
})
