// test-needs: strace
// (a slow disk simulated by strace's syscall delay. See scripts/test-parts.ts.)
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { provisionAgents, requireBinary, startServe } from '../binary/process.ts'
import { attachStrace, detach, holdingSyncs } from '../binary/strace.ts'
import { tempDir, until } from '../harness.ts'

/**
 * A disk that takes seconds to sync (an SD card under load, a network volume) holds a write's
 * answer, never the server: `dist/hark serve` with strace attached holding every fsync and
 * fdatasync for two seconds. A send on an idle server (a lone write) commits, and its sync runs
 * on the thread pool; a second send made meanwhile is taken and committed while the first is
 * still waiting for the disk. (SQLite's own sync at COMMIT held the event loop: the second send
 * was not even read until the first was on disk.) Both are acknowledged only once durable, in
 * order. Meanwhile `/health` and the web app's shell, which show nothing stored, answer at once.
 */
const HELD_MS = 2000
const dir = tempDir('hark-slow-disk-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** strace attached to the server, holding each sync `HELD_MS`. */
const holdSyncs = (pid: number) => attachStrace(pid, ['-o', '/dev/null', ...holdingSyncs(HELD_MS)])

test('POST /v1/messages on a slow disk: a send made while a lone send waits for its sync is committed meanwhile', async () => {
  requireBinary()
  const [{ token }] = await provisionAgents(dir, 'slow@example.com', ['slow'])
  const server = await startServe(['--data', dir, '--write-limit', '0'])
  const reader = new Database(join(dir, 'hark.db'), { readonly: true })
  try {
    const send = (text: string) =>
      fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ body: { text } }),
      }).then((r) => r.status)
    const committed = (text: string) =>
      reader
        .query<{ n: number }, [string]>(
          "SELECT count(*) AS n FROM messages WHERE json_extract(body, '$.text') = ?",
        )
        .get(text)?.n === 1
    // What starting wrote is flushed by the time a send is answered: the next send is alone.
    expect(await send('warm-up')).toBe(200)
    const strace = await holdSyncs(server.proc.pid)
    const answered: string[] = []
    const first = send('first').then((status) => {
      answered.push('first')
      return status
    })
    await until(() => committed('first'), 10_000)
    const second = send('second').then((status) => {
      answered.push('second')
      return status
    })
    await until(() => committed('second'), 10_000)
    // Both are in the database; the first is still waiting for the disk, so neither is answered.
    expect(answered).toEqual([])
    // What shows nothing stored answers at once; a feed read, which shows both, waits for them.
    const get = (name: string, path: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { headers }).then(async (r) => {
        answered.push(name)
        return `${name} ${r.status} ${(await r.text()).length > 0}`
      })
    const reads = [
      get('health', '/health'),
      get('app shell', '/'),
      get('feed', '/v1/messages?peek=1', { authorization: `Bearer ${token}` }),
    ]
    expect(await reads[0]).toBe('health 200 true')
    expect(await reads[1]).toBe('app shell 200 true')
    expect(answered).toEqual(['health', 'app shell'])
    expect(await Promise.all([first, second, ...reads])).toEqual([
      200,
      200,
      'health 200 true',
      'app shell 200 true',
      'feed 200 true',
    ])
    expect(answered.slice(2, 3)).toEqual(['first'])
    expect(answered.slice(3).sort()).toEqual(['feed', 'second'])
    await detach(strace)
  } finally {
    reader.close()
    server.proc.kill('SIGTERM')
    await server.proc.exited
  }
}, 30_000)
