import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, until } from '../harness.ts'

/**
 * `Idempotency-Key` on uploads (their bytes are the request) and on concurrent requests: the
 * same key never writes twice, whatever arrives at the same time.
 */
const s = await startTestServer()
afterAll(() => s.close())

const count = (server: TestServer, sql: string, ...args: string[]) =>
  (server.ctx.db.query(sql).get(...args) as { n: number }).n
const fileRows = (name: string) => count(s, 'SELECT count(*) AS n FROM files WHERE name = ?', name)
/** The stored files of the channel and the temporary ones: a refused upload leaves neither. */
const onDisk = () => {
  const dirs = [join(s.ctx.filesDir, s.channelId), join(s.ctx.filesDir, '.tmp')]
  return dirs.flatMap((d) => (existsSync(d) ? readdirSync(d) : [])).length
}

/** Uploads streaming right now: each has its temporary file. */
const streamingNow = () => {
  const tmp = join(s.ctx.filesDir, '.tmp')
  return existsSync(tmp) ? readdirSync(tmp).length : 0
}

const upload = (key: string, body: BodyInit, name = 'a.bin', type = 'application/octet-stream') =>
  s.handle(
    new Request(`${s.url}/v1/files?name=${encodeURIComponent(name)}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${s.agentToken}`,
        'idempotency-key': key,
        'content-type': type,
      },
      body,
    }),
  )

/** A body that sends `parts` chunks, one every `everyMs`: an upload still streaming. */
function slowBody(parts: number, everyMs: number): ReadableStream<Uint8Array> {
  let sent = 0
  return new ReadableStream({
    async pull(controller) {
      if (sent === parts) return controller.close()
      await Bun.sleep(everyMs)
      controller.enqueue(new Uint8Array(1024).fill(sent++))
    },
  })
}

describe('uploads', () => {
  test('the same bytes under the same key: the first file again, stored once', async () => {
    const bytes = new Uint8Array(5000).map((_, i) => i % 251)
    const first = await upload('up-1', bytes, 'same.bin')
    const files = onDisk()
    const again = await upload('up-1', bytes, 'same.bin')
    expect(first.status).toBe(200)
    expect(again.status).toBe(200)
    const text = await first.text()
    expect(await again.text()).toBe(text)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(fileRows('same.bin')).toBe(1)
    expect(onDisk()).toBe(files)
  })

  test('other bytes, another type or another name under the key: 409, nothing stored', async () => {
    const bytes = new Uint8Array([1, 2, 3])
    expect((await upload('up-2', bytes, 'b.bin')).status).toBe(200)
    const files = onDisk()
    for (const [body, name, type] of [
      [new Uint8Array([1, 2, 4]), 'b.bin', 'application/octet-stream'],
      [bytes, 'b.bin', 'text/plain'],
      [bytes, 'c.bin', 'application/octet-stream'],
    ] as const) {
      const r = await upload('up-2', body, name, type)
      expect(r.status).toBe(409)
      expect(((await r.json()) as { field: string }).field).toBe('Idempotency-Key')
    }
    expect(fileRows('b.bin')).toBe(1)
    expect(fileRows('c.bin')).toBe(0)
    expect(onDisk()).toBe(files)
  })

  test('a bad key is 400 before a byte is stored', async () => {
    const files = onDisk()
    const r = await upload('x'.repeat(256), new Uint8Array([1]), 'bad.bin')
    expect(r.status).toBe(400)
    expect(((await r.json()) as { field: string }).field).toBe('Idempotency-Key')
    expect(fileRows('bad.bin')).toBe(0)
    expect(onDisk()).toBe(files)
  })
})

describe('concurrent requests with the same key', () => {
  test('two uploads at once: the second waits for the first and answers it again', async () => {
    const streaming = upload('up-c', slowBody(6, 30), 'both.bin')
    // Sent while the first is still streaming (its temporary file exists).
    await until(() => streamingNow() > 0)
    const b = await upload('up-c', slowBody(6, 1), 'both.bin')
    const a = await streaming
    expect([a.status, b.status]).toEqual([200, 200])
    expect(await b.text()).toBe(await a.text())
    expect(a.headers.get('idempotent-replayed')).toBeNull()
    expect(b.headers.get('idempotent-replayed')).toBe('true')
    expect(fileRows('both.bin')).toBe(1)
  })

  test('a message sent with the key of an upload under way waits, then is 409', async () => {
    const streaming = upload('up-m', slowBody(6, 30), 'then.bin')
    await until(() => streamingNow() > 0)
    const message = await s.request('POST', '/v1/messages', {
      token: s.agentToken,
      json: { body: { text: 'same key as an upload' } },
      headers: { 'idempotency-key': 'up-m' },
    })
    expect((await streaming).status).toBe(200)
    expect(message.status).toBe(409)
    expect(
      count(s, "SELECT count(*) AS n FROM messages WHERE body LIKE '%same key as an upload%'"),
    ).toBe(0)
  })

  test('many sends at once over real sockets: one message, every answer the same', async () => {
    const live = await startTestServer({ listen: true })
    try {
      const send = () =>
        fetch(`${live.url}/v1/messages`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${live.agentToken}`,
            'content-type': 'application/json',
            'idempotency-key': 'together',
          },
          body: JSON.stringify({ body: { text: 'all at once' } }),
        })
      const replies = await Promise.all(Array.from({ length: 20 }, send))
      const texts = await Promise.all(replies.map((r) => r.text()))
      expect(replies.map((r) => r.status)).toEqual(replies.map(() => 200))
      expect(new Set(texts).size).toBe(1)
      const replayed = replies.filter((r) => r.headers.get('idempotent-replayed') === 'true')
      expect(replayed).toHaveLength(19)
      expect(
        count(live, "SELECT count(*) AS n FROM messages WHERE body LIKE '%all at once%'"),
      ).toBe(1)
    } finally {
      await live.close()
    }
  })
})
