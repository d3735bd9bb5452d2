import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { MAX_JSON_DEPTH } from '../../src/core/http/json-body.ts'
import { startTestServer } from '../harness.ts'
import { rawHttp } from '../security/util.ts'
import { probe, RUNS } from './fuzz.ts'
import { type FuzzServer, fuzzServer } from './setup.ts'

/**
 * Property-based tests of what the attack pass used: nesting, encodings and Host headers. Every
 * request is answered in bounded time with 2xx or a 4xx JSON error that changed nothing; past
 * the nesting limit, or with text that is not UTF-8 or not Unicode, always a 400.
 */
let f: FuzzServer
beforeAll(async () => {
  f = await fuzzServer()
})
afterAll(() => f.s.close())

/** Routes of every side that read a JSON body, with the token each needs. */
const ROUTES = () => [
  { path: '/v1/messages', method: 'POST', token: f.agent },
  { path: '/v1/pins/fuzz', method: 'PUT', token: f.agent },
  { path: `/v1/app/channels/${f.channelId}/messages`, method: 'POST', token: f.person },
  { path: '/v1/app/messages/msg_x/answer', method: 'POST', token: f.person },
  { path: '/v1/pair/start', method: 'POST', token: undefined },
  { path: '/v1/auth/passkey/login/verify', method: 'POST', token: undefined },
]

const request = (route: { path: string; method: string; token?: string }, body: BodyInit) =>
  new Request(`http://hark.test${route.path}`, {
    method: route.method,
    headers: {
      'content-type': 'application/json',
      ...(route.token ? { authorization: `Bearer ${route.token}` } : {}),
    },
    body,
  })

/** A JSON value whose nesting is `depth`, built of arrays and objects at random. */
const nestedValue = fc
  .tuple(fc.integer({ min: 1, max: 80 }), fc.array(fc.boolean(), { minLength: 80, maxLength: 80 }))
  .map(([depth, kinds]) => {
    let value: unknown = 'leaf'
    for (let i = 0; i < depth; i++) value = kinds[i] ? [value, 1] : { k: value }
    return { depth, value }
  })

test('any nesting, anywhere in a body: over the limit always 400, never 500', async () => {
  const where = fc.constantFrom('top', 'text', 'blocks', 'answer')
  await fc.assert(
    fc.asyncProperty(nestedValue, where, fc.nat(5), async ({ depth, value }, at, r) => {
      const route = ROUTES()[r] as ReturnType<typeof ROUTES>[number]
      const body =
        at === 'top'
          ? { body: { text: 'x' }, v: value, label: 'x' }
          : at === 'text'
            ? { body: { text: value } }
            : at === 'blocks'
              ? { body: { blocks: [{ type: 'table', columns: ['a'], rows: [[value]] }] } }
              : { answer: value }
      // The wrapper adds its own levels: the body nests deeper than `depth` by these.
      const wrapper = at === 'top' || at === 'answer' ? 1 : at === 'text' ? 2 : 5
      const status = await probe(f.s, request(route, JSON.stringify(body)))
      if (depth + wrapper > MAX_JSON_DEPTH) expect(status).toBe(400)
    }),
    { numRuns: RUNS },
  )
})

test('any bytes in a JSON string: invalid UTF-8 is always 400, never stored', async () => {
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 40 }), fc.nat(5), async (bytes, r) => {
      const route = ROUTES()[r] as ReturnType<typeof ROUTES>[number]
      const safe = bytes.map((b) => (b === 0x22 || b === 0x5c || b < 0x20 ? 0x61 : b))
      const head = new TextEncoder().encode('{"body":{"text":"')
      const tail = new TextEncoder().encode('"},"label":"x","answer":"x"}')
      const status = await probe(f.s, request(route, new Uint8Array([...head, ...safe, ...tail])))
      let utf8 = true
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(safe)
      } catch {
        utf8 = false
      }
      if (!utf8) expect(status).toBe(400)
    }),
    { numRuns: RUNS },
  )
})

test('any UTF-16 text, escaped as JSON does: strings that are not Unicode are always 400', async () => {
  await fc.assert(
    fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 30 }), fc.nat(5), async (text, r) => {
      const route = ROUTES()[r] as ReturnType<typeof ROUTES>[number]
      const body = JSON.stringify({ body: { text }, label: text || 'x', answer: text })
      const status = await probe(f.s, request(route, body))
      if (!text.isWellFormed()) expect(status).toBe(400)
    }),
    { numRuns: RUNS },
  )
})

test('any Host header: 200 or a 400, the server stays up', async () => {
  const server = await startTestServer({ listen: true })
  try {
    const printable = fc.string({
      unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      maxLength: 30,
    })
    const host = fc.oneof(
      printable,
      fc.constantFrom('[', ']', '[::1', '%zz', 'a', 'a:', ':80', 'x:99999', '[::1]:8080', '@'),
    )
    const statuses = new Set<number>()
    await fc.assert(
      fc.asyncProperty(host, async (h) => {
        const answer = await rawHttp(
          server.port,
          `GET /v1/info HTTP/1.1\r\nHost: ${h}\r\nConnection: close\r\n\r\n`,
        )
        statuses.add(answer.status)
        expect([200, 400]).toContain(answer.status)
        if (answer.status === 200) expect(JSON.parse(answer.body).name).toBe('Hark')
      }),
      { numRuns: Math.min(RUNS, 100) },
    )
    expect(statuses.has(200)).toBe(true)
    const health = await rawHttp(server.port, 'GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n')
    expect(health.status).toBe(200)
  } finally {
    await server.close()
  }
})
