// test-needs: strace
// (a failing disk simulated by strace's syscall fault injection. See scripts/test-parts.ts.)
import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { provisionAgents, requireBinary, startServe } from '../binary/process.ts'
import { attachStrace, detach } from '../binary/strace.ts'
import { tempDir } from '../harness.ts'

/**
 * A disk that fails a flush (EIO: a dying SD card, a full thin volume). What was committed may
 * not be on disk, and a retried fsync can report success for pages the kernel dropped, so
 * `dist/hark serve` acknowledges nothing more: the write that was waiting and every later one
 * are refused with 503, even once the disk answers again, until the server is restarted; and
 * `GET /health` says so, for whatever watches it (systemd, a proxy, an uptime monitor). After a
 * restart, writes are taken again. strace attached to the server makes every `fdatasync` (the
 * write-ahead log's flush, on the thread pool) fail with EIO, then is detached.
 */
const dir = tempDir('hark-flush-failure-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('POST /v1/messages when the disk fails a flush: 503 until a restart, and GET /health says so', async () => {
  requireBinary()
  const [{ token }] = await provisionAgents(dir, 'eio@example.com', ['eio'])
  const send = async (url: string, text: string) => {
    const r = await fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: { text } }),
    })
    return { status: r.status, error: ((await r.json()) as { error?: string }).error }
  }
  const health = async (url: string) => {
    const r = await fetch(`${url}/health`)
    return { status: r.status, body: await r.json() }
  }
  const refused = {
    status: 503,
    error: 'the database could not store this write; nothing was saved, try again',
  }

  const first = await startServe(['--data', dir, '--write-limit', '0'])
  try {
    expect(await send(first.url, 'before')).toEqual({ status: 200, error: undefined })
    expect(await health(first.url)).toEqual({ status: 200, body: { ok: true } })
    const strace = await attachStrace(first.proc.pid, [
      '-o',
      '/dev/null',
      '-e',
      'trace=fdatasync',
      '-e',
      'inject=fdatasync:error=EIO',
    ])
    expect(await send(first.url, 'during')).toEqual(refused)
    await detach(strace)
    // The disk answers again; the server still takes nothing.
    expect(await send(first.url, 'after')).toEqual(refused)
    const unwell = await health(first.url)
    expect(unwell.status).toBe(503)
    expect(unwell.body.error).toBe(
      'the database could not be flushed to disk; writes are refused until hark is restarted',
    )
    expect(first.log()).toContain('flushing the database to disk failed')
  } finally {
    first.proc.kill('SIGKILL')
    await first.proc.exited
  }

  const second = await startServe(['--data', dir, '--write-limit', '0'])
  try {
    expect(await health(second.url)).toEqual({ status: 200, body: { ok: true } })
    expect(await send(second.url, 'restarted')).toEqual({ status: 200, error: undefined })
  } finally {
    second.proc.kill('SIGTERM')
    await second.proc.exited
  }
}, 60_000)
