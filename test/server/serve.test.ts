import { afterEach, expect, test } from 'bun:test'
import type { Logger } from '../../src/core/log.ts'
import { startTestServer, type TestServer, until } from '../harness.ts'

/** Tests over a real loopback socket: what `app.handle()` cannot show. */
let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

async function start(idleTimeout: number, log?: Logger) {
  server = await startTestServer({ listen: true, idleTimeout, log })
  return server
}

test("a long-poll outlives Bun's idle timeout", async () => {
  // With a 1 s idle timeout Bun cuts a silent connection after ~4 s (its timer ticks in 4 s
  // steps); a 6 s wait only completes if the poll extends its own timeout.
  const { agent } = await start(1)
  const started = performance.now()
  const answer = await agent.feed({ since: 0, wait: 6 })
  expect(answer).toEqual({ messages: [], cursor: 0, has_more: false })
  expect(performance.now() - started).toBeGreaterThanOrEqual(5900)
})

test('a long-poll is answered by a send on another connection', async () => {
  const s = await start(30)
  const { agent } = s
  const held = agent.feed({ since: 0, wait: 20 })
  await until(() => s.ctx.waiters.size === 1)
  const { message } = await agent.send({ body: { text: 'wake up' } })
  const answer = await held
  expect(answer.messages.map((m) => m.id)).toEqual([message.id])
})

test('a client that disconnects leaves no waiter behind', async () => {
  const s = await start(30)
  const abort = new AbortController()
  const held = s.agent.feed({ since: 0, wait: 30 }, abort.signal).catch((e: Error) => e)
  await until(() => s.ctx.waiters.size === 1)
  abort.abort()
  expect(await held).toBeInstanceOf(Error)
  await until(() => s.ctx.waiters.size === 0)
})

test('stop() answers held long-polls before closing', async () => {
  const s = await start(30)
  const held = s.agent.feed({ since: 0, wait: 30 })
  await until(() => s.ctx.waiters.size === 1)
  await s.stop()
  expect(await held).toEqual({ messages: [], cursor: 0, has_more: false })
})

test('a stranger cannot make the server buffer a large body: 413 before reading it', async () => {
  const r = await start(30)
  const big = 'x'.repeat(2 * 1024 * 1024)
  const res = await fetch(`${r.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ body: { text: big } }),
  })
  expect(res.status).toBe(413)
  expect(((await res.json()) as { error: string }).error).toContain('larger than')
  // Uploads keep their own, larger limit and still stream.
  const upload = await fetch(`${r.url}/v1/files?name=a.bin`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: new Uint8Array(2 * 1024 * 1024),
  })
  expect(upload.status).toBe(401) // no token: refused by auth, not by size
})

test('a JSON body of unknown length is refused (411); a small normal one goes through', async () => {
  const r = await start(30)
  const { agent } = r
  const chunked = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode('{"body":{"text":"hi"}}'))
      c.close()
    },
  })
  const res = await fetch(`${r.url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: chunked,
  })
  expect(res.status).toBe(411)
  expect((await agent.send({ body: { text: 'fine' } })).message.body.text).toBe('fine')
})

test('one log line per request, without query strings or pairing codes', async () => {
  const lines: string[] = []
  const log: Logger = {
    info: (m) => lines.push(m),
    warn: (m) => lines.push(m),
    error: (m) => lines.push(m),
  }
  const r = await start(30, log)
  await fetch(`${r.url}/v1/app/pairings/BCDF-GHJK?secret=1`)
  await fetch(`${r.url}/health?x=secret`)
  const requests = lines.filter((l) => / (GET|POST) /.test(l))
  expect(requests).toHaveLength(2)
  expect(requests[0]).toMatch(/^127\.0\.0\.1 GET \/v1\/app\/pairings\/… 401 [\d.]+ms$/)
  expect(requests[1]).toMatch(/^127\.0\.0\.1 GET \/health 200 /)
  expect(lines.join('\n')).not.toContain('BCDF')
  expect(lines.join('\n')).not.toContain('secret')
})
