import { afterEach, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../harness.ts'
import { current } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

/** The agent's write routes: the send path and the writes that share its shape. */
const AGENT_WRITES = [
  ['POST', '/v1/messages'],
  ['PATCH', '/v1/messages/:id'],
  ['PUT', '/v1/messages/:id'],
  ['POST', '/v1/messages/:id/state'],
  ['PUT', '/v1/pins/:key'],
  ['PATCH', '/v1/pins/:key'],
  ['POST', '/v1/messages/:id/cancel'],
] as const

describe('POST /v1/messages: the per-send work Elysia does', () => {
  // Elysia reads a handler's source to decide what to prepare for it: a handler that hands its
  // whole context `c` on is assumed to use everything, so every send parsed the Cookie header
  // into a cookie jar (~2% of a send's time under wrk, bench/README.md). Agent routes read no
  // cookie: the compiled handler must not parse one.
  test('the agent write routes are compiled without cookie parsing', async () => {
    s = await startTestServer()
    const routes = s.app.routes as unknown as {
      method: string
      path: string
      compile: () => unknown
    }[]
    for (const [method, path] of AGENT_WRITES) {
      const route = routes.find((r) => r.method === method && r.path === path)
      expect(route, `${method} ${path}`).toBeDefined()
      const compiled = String(route?.compile())
      expect(compiled.includes('parseCookie'), `${method} ${path} parses cookies`).toBe(false)
    }
  })

  test('a send with a Cookie header on it still answers 200 and is stored', async () => {
    s = await startTestServer()
    const r = await s.request('POST', '/v1/messages', {
      token: s.agentToken,
      json: { body: { text: 'with a stray cookie' } },
      cookie: 'hark_session=not-a-session; other=1',
    })
    expect(r.status).toBe(200)
    const id: string = r.body.message.id
    expect(await current(s, id)).toEqual(r.body.message)
  })

  // Every send's unit runs in a savepoint; its sub-journal spilled to a temporary file (~13
  // pwrite64 calls per send under wrk, bench/README.md) until it was kept in memory.
  test("the server's connection keeps temporary data, savepoints' sub-journals included, in memory", async () => {
    s = await startTestServer()
    const row = s.ctx.db.query<{ temp_store: number }, []>('PRAGMA temp_store').get()
    expect(row?.temp_store).toBe(2) // MEMORY
  })
})
