// test-needs: agent-clis
// (Kept in the agent-CLI part that typescript.test.ts ran in before it was split in three (its Deno
// test uses the Deno of .cache/agent-clis); this file itself needs only Bun: its servers are its own. See scripts/test-parts.ts.)
import { describe, expect, test } from 'bun:test'
import { Hark, HarkError } from '../../sdk/typescript/src/index.ts'

/**
 * The TypeScript SDK's transport (sdk/typescript), against small local servers that record what
 * they receive or stall: its idempotency keys, its retries and its bounds.
 */
describe('TypeScript SDK: idempotency keys and retries (a recording server)', () => {
  test('one key per logical write, the same on its retries; 503 and 429 retried', async () => {
    const seen: { method: string; key: string | null; body: string }[] = []
    let failNext = 0
    let limitNext = 0
    const echo = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        seen.push({
          method: request.method,
          key: request.headers.get('idempotency-key'),
          body: await request.text(),
        })
        if (failNext > 0) {
          failNext--
          return new Response('{"error":"down"}', { status: 503 })
        }
        if (limitNext > 0) {
          limitNext--
          return Response.json(
            { error: 'slow down' },
            { status: 429, headers: { 'retry-after': '1' } },
          )
        }
        return Response.json({ message: { id: 'msg_1', body: {} }, pins: [] })
      },
    })
    try {
      const c = new Hark({
        url: `http://127.0.0.1:${echo.port}`,
        token: 't',
        retry: { baseDelayMs: 20 },
      })
      failNext = 2
      await c.send('one')
      expect(seen).toHaveLength(3)
      const key = seen[0]!.key
      expect(key).toMatch(/^[0-9a-f-]{36}$/)
      expect(seen.map((s) => s.key)).toEqual([key, key, key])
      expect(new Set(seen.map((s) => s.body)).size).toBe(1)

      seen.length = 0
      limitNext = 1
      const t0 = Date.now()
      await c.send('two')
      expect(seen).toHaveLength(2)
      expect(Date.now() - t0).toBeGreaterThanOrEqual(900)
      expect(seen[1]!.key).toBe(seen[0]!.key)
      expect(seen[0]!.key).not.toBe(key)

      seen.length = 0
      await c.send('three', { idempotencyKey: 'my-own-key' })
      await c.pins()
      expect(seen.map((s) => [s.method, s.key])).toEqual([
        ['POST', 'my-own-key'],
        ['GET', null],
      ])

      seen.length = 0
      failNext = 10
      const gaveUp = await c.send('four').catch((e) => e)
      expect(gaveUp.status).toBe(503)
      expect(seen).toHaveLength(4)
    } finally {
      echo.stop(true)
    }
  })
})

describe('TypeScript SDK: bounds (the transport the binary shares)', () => {
  test('an answer whose body stops half-way is a timeout, not a hang', async () => {
    let requests = 0
    const stalling = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch() {
        requests++
        // The head and the first bytes come at once; the rest never does.
        const body = new ReadableStream<Uint8Array>({
          start(out) {
            out.enqueue(new TextEncoder().encode('{"channel":'))
          },
        })
        return new Response(body, { headers: { 'content-type': 'application/json' } })
      },
    })
    try {
      const c = new Hark({ url: `http://127.0.0.1:${stalling.port}`, token: 't', timeoutMs: 300 })
      const error = await c.channel().catch((e) => e)
      expect(error).toBeInstanceOf(HarkError)
      expect(error.kind).toBe('timeout')
      expect(error.status).toBe(0)
      // A timeout is the caller's bound: it is not repeated.
      expect(requests).toBe(1)
    } finally {
      stalling.stop(true)
    }
  }, 10_000)
})
