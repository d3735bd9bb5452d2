import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.ts'
import { provisionAgents, requireBinary, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'

/**
 * A crash between a write and its key cannot happen: they commit together. `dist/hark` takes
 * keyed sends from concurrent clients and is killed with SIGKILL at a random moment; then every
 * key is sent again, as a client whose answer was lost would. Each acknowledged send answers
 * its first result again; each one the crash cut off is either replayed (it had committed) or
 * written now; and no text is ever in the channel twice.
 */
const dir = tempDir('hark-idem-crash-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** How many messages of the channel hold each text, read from the file as the crash left it. */
function textCounts(): Map<string, number> {
  const db = openDatabase(join(dir, 'hark.db'))
  try {
    const rows = db
      .query<{ text: string; n: number }, []>(
        "SELECT json_extract(body, '$.text') AS text, count(*) AS n FROM messages GROUP BY text",
      )
      .all()
    return new Map(rows.map((r) => [r.text, r.n]))
  } finally {
    db.close()
  }
}

test('keyed sends across kill -9: acknowledged ones replay, none is written twice', async () => {
  requireBinary()
  const [{ token }] = await provisionAgents(dir, 'crash@example.com', ['crash'])
  const args = ['--data', dir, '--write-limit', '0']
  const send = (url: string, key: string, text: string) =>
    fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'idempotency-key': key,
      },
      body: JSON.stringify({ body: { text } }),
    })
  const sent = new Map<string, string>()
  const acked = new Map<string, string>()
  const first = await startServe(args)
  let stopped = false
  const worker = async (w: number) => {
    for (let n = 0; !stopped; n++) {
      const key = `w${w}-${n}`
      const text = `crash ${w}.${n}`
      sent.set(key, text)
      try {
        const r = await send(first.url, key, text)
        if (r.status === 200)
          acked.set(key, ((await r.json()) as { message: { id: string } }).message.id)
      } catch {
        return // the server is gone
      }
    }
  }
  const load = Promise.all([0, 1, 2, 3].map(worker))
  await Bun.sleep(300 + Math.random() * 900)
  first.proc.kill('SIGKILL')
  stopped = true
  await first.proc.exited
  await load
  expect(acked.size).toBeGreaterThan(10)

  const after = textCounts()
  for (const [text, n] of after) expect(`${text}: ${n}`).toBe(`${text}: 1`)
  for (const key of acked.keys()) expect(after.get(sent.get(key) as string)).toBe(1)

  const second = await startServe(args)
  try {
    let replayed = 0
    for (const [key, text] of sent) {
      const r = await send(second.url, key, text)
      expect(r.status).toBe(200)
      const { message } = (await r.json()) as { message: { id: string } }
      const wasThere = after.get(text) === 1
      // Committed before the kill (acknowledged or not): the first answer; else written now.
      expect(r.headers.get('idempotent-replayed')).toBe(wasThere ? 'true' : null)
      if (acked.has(key)) expect(message.id).toBe(acked.get(key) as string)
      if (wasThere) replayed++
    }
    expect(replayed).toBeGreaterThanOrEqual(acked.size)
  } finally {
    second.proc.kill('SIGKILL')
    await second.proc.exited
  }
  const final = textCounts()
  for (const text of sent.values()) expect(`${text}: ${final.get(text)}`).toBe(`${text}: 1`)
}, 50_000)
