import { beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { SQL } from 'bun'
import { run, type Served, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import type { Receiver } from '../push/receiver.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { call, type Reply, useTwoInstances } from './two-instances.ts'

/**
 * Two `dist/hark serve` instances on one Postgres and one S3 bucket (test/pg/two-instances.ts):
 * what they share (the VAPID pair, the push queue, the bucket, the write limit, a port) is one,
 * and a kill of one under load loses no acknowledged write.
 */
const skip = skipWithoutPostgres()

let receiver: Receiver
let pg: SQL
let a: Served
let b: Served
let agent: string
let person: string
/** The owner's browser session (what only the app may do: push devices, invites). */
let ownerApp: string
/** Agents of channels of their own: the write-limit test's, and the load test's. */
let limited: string
let loaders: string[]
let env: () => Record<string, string>

describe.skipIf(skip)('two hark serve instances on one Postgres', () => {
  const instances = useTwoInstances()
  beforeAll(() => {
    ;({ a, b, pg, receiver, agent, person, ownerApp, limited, loaders, env } = instances())
  })

  test('both instances sign pushes with the one VAPID pair in the database', async () => {
    const [row] = await pg`SELECT public_key FROM vapid_keys`
    const keys = await Promise.all(
      [a, b].map(async (at) => (await call(at, 'GET', '/v1/info')).body),
    )
    expect(keys.map((info) => info.vapid_public_key)).toEqual([row.public_key, row.public_key])
  })

  test('hark admin backup refuses the Postgres records, saying what to use instead', async () => {
    const refused = await run(['admin', 'backup', join(tempDir('hark-bk-'), 'b.tar')], env())
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('the records are in Postgres (HARK_DATABASE_URL is set)')
    expect(refused.stderr).toContain('pg_dump')
  })

  test('each message is pushed once, through whichever instance it was sent', async () => {
    const sub = receiver.subscription('phone')
    const subscribed = await call(a, 'POST', '/v1/app/push/subscriptions', {
      cookie: ownerApp,
      json: { endpoint: sub.endpoint, keys: sub.keys, name: 'Phone' },
    })
    expect(subscribed.status).toBe(200)
    const ids: string[] = []
    for (let n = 0; n < 20; n++) {
      const sent = await call(n % 2 ? b : a, 'POST', '/v1/messages', {
        token: agent,
        json: { body: { text: `push ${n}` } },
      })
      expect(sent.status).toBe(200)
      ids.push(sent.body.message.id)
    }
    await receiver.waitFor(20, 10_000)
    // Both workers keep looking at the one queue: a second send of any would arrive by now.
    await Bun.sleep(1_000)
    const pushed = receiver.received.map((r) => r.payload.message_id)
    expect(pushed.toSorted()).toEqual(ids.toSorted())
    const [queue] = await pg`SELECT count(*) AS n FROM push_queue`
    expect(Number(queue.n)).toBe(0)
  })

  test('a file uploaded through A downloads through B (bytes in the shared bucket)', async () => {
    const bytes = crypto.getRandomValues(new Uint8Array(100_000))
    const up = await fetch(`${a.url}/v1/files?name=blob.bin`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/octet-stream' },
      body: bytes,
    })
    expect(up.status).toBe(200)
    const { file_id } = (await up.json()) as { file_id: string }
    const down = await fetch(`${b.url}/v1/files/${file_id}`, {
      headers: { authorization: `Bearer ${agent}`, range: 'bytes=10-19' },
    })
    expect(down.status).toBe(206)
    expect(new Uint8Array(await down.arrayBuffer())).toEqual(bytes.slice(10, 20))
  })

  test('the write limit (120 a minute per channel) holds across both instances', async () => {
    const send = (at: Served, n: number) =>
      call(at, 'POST', '/v1/messages', { token: limited, json: { body: { text: `w${n}` } } })
    const replies: Reply[] = []
    // Alternating, 200 in all: each instance alone would admit its 100. Shared, the burst of
    // 120 passes and then one more per half second of the time they took (the bucket refills).
    const started = performance.now()
    for (let n = 0; n < 200; n++) replies.push(await send(n % 2 ? b : a, n))
    const refilled = Math.ceil(((performance.now() - started) / 60_000) * 120)
    const statuses = replies.map((r) => r.status)
    const admitted = statuses.filter((s) => s === 200).length
    expect(admitted).toBeGreaterThanOrEqual(120)
    expect(admitted).toBeLessThanOrEqual(120 + refilled)
    expect(statuses.slice(0, 120).every((s) => s === 200)).toBe(true)
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([])
    // Each refusal, from either instance, says when to come back.
    for (const r of replies.filter((r) => r.status === 429)) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0)
    }
  })

  test('with --reuse-port, two more instances share one port on this machine', async () => {
    const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = String(probe.port)
    probe.stop(true)
    const shared = ['--reuse-port', '--port', port]
    const c = await startServe(['--data', tempDir('hark-c-'), ...shared], env())
    try {
      // The second would fail with "already in use" without SO_REUSEPORT on both.
      const d = await startServe(['--data', tempDir('hark-d-'), ...shared], env())
      try {
        expect(new URL(c.url).port).toBe(port)
        expect(new URL(d.url).port).toBe(port)
        for (let n = 0; n < 10; n++) {
          const info = await fetch(`http://127.0.0.1:${port}/v1/info`)
          expect(info.status).toBe(200)
        }
      } finally {
        d.proc.kill()
        await d.proc.exited
      }
    } finally {
      c.proc.kill()
      await c.proc.exited
    }
  })

  // Last: it ends B.
  test('kill -9 of B under load: every acknowledged write is there once, in cursor order; A serves on', async () => {
    const acknowledged = new Set<string>()
    let killed = false
    // One worker per channel (each has its own write limit), each to A and B by turns, until
    // 100 writes each; B is killed part way, after which a worker sends to A only.
    const worker = async (token: string, w: number) => {
      for (let n = 0; n < 100; n++) {
        const text = `load ${w}.${n}`
        const at = !killed && n % 2 ? b : a
        try {
          const sent = await call(at, 'POST', '/v1/messages', {
            token,
            json: { body: { text } },
            signal: AbortSignal.timeout(10_000),
          })
          if (sent.status === 200) acknowledged.add(text)
        } catch {
          // B died with this request in flight: not acknowledged, maybe written, maybe not.
        }
      }
    }
    const load = Promise.all(loaders.map((token, w) => worker(token, w)))
    while (acknowledged.size < 200) await Bun.sleep(5)
    b.proc.kill('SIGKILL')
    killed = true
    await b.proc.exited
    await load
    expect(acknowledged.size).toBeGreaterThan(600)

    // A still serves: a write and a read through it.
    const after = await call(a, 'POST', '/v1/messages', {
      token: agent,
      json: { body: { text: 'after the kill' } },
    })
    expect(after.status).toBe(200)

    // The person's feed through A, page by page from cursor to cursor, is every change once
    // and in the order of the change numbers the database holds (no row skipped or repeated).
    const fed: string[] = []
    let since = 0
    for (let page = 0; page < 200; page++) {
      const feed = await call(a, 'GET', `/v1/app/feed?since=${since}&limit=50`, { token: person })
      expect(feed.status).toBe(200)
      if (typeof feed.body.cursor !== 'number') {
        throw new Error(`a feed page without a cursor: ${JSON.stringify(feed.body).slice(0, 400)}`)
      }
      for (const m of feed.body.messages as { body: { text?: string; title?: string } }[]) {
        fed.push(m.body.text ?? m.body.title ?? '')
      }
      expect(feed.body.cursor).toBeGreaterThan(since)
      since = feed.body.cursor
      if (!feed.body.has_more) break
    }
    const stored = await pg`
      SELECT m.body FROM messages m JOIN channels c ON c.id = m.channel_id
      JOIN users u ON u.id = c.user_id WHERE u.email = 'owner@example.com' ORDER BY m.seq`
    expect(fed).toEqual(
      stored.map((r: { body: string }) => {
        const body = JSON.parse(r.body) as { text?: string; title?: string }
        return body.text ?? body.title ?? ''
      }),
    )
    const seen = new Map<string, number>()
    for (const text of fed) seen.set(text, (seen.get(text) ?? 0) + 1)
    for (const text of acknowledged) expect(seen.get(text)).toBe(1)
    expect(seen.get('after the kill')).toBe(1)
  }, 120_000)
})
