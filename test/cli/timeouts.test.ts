import { afterAll, describe, expect, test } from 'bun:test'
import { createServer, type Socket } from 'node:net'
import { makeCli, removeHome } from './live.ts'

/**
 * Issue 16, defect 6: a server that accepts the connection and never answers must not hang the
 * CLI. Every request is bounded (HARK_REQUEST_TIMEOUT, else 30 s; a long-poll its wait more).
 */
const sockets = new Set<Socket>()
const silent = createServer((socket) => {
  sockets.add(socket)
  socket.on('error', () => {})
  socket.on('close', () => sockets.delete(socket))
})
const url = await new Promise<string>((resolve) =>
  silent.listen(0, '127.0.0.1', () =>
    resolve(`http://127.0.0.1:${(silent.address() as { port: number }).port}`),
  ),
)
const cli = makeCli()
afterAll(() => {
  for (const socket of sockets) socket.destroy()
  silent.close()
  removeHome(cli)
})

const env = (extra: Record<string, string> = {}) => ({
  HARK_URL: url,
  HARK_TOKEN: 'hark_agent_whatever',
  ...extra,
})

describe('a server that never answers', () => {
  test('hark send fails within the bound, naming the timeout, exit 1', async () => {
    const started = performance.now()
    const out = await cli.run(['send', 'hello'], { env: env({ HARK_REQUEST_TIMEOUT: '1' }) })
    const took = performance.now() - started
    expect(out.code).toBe(1)
    expect(out.stdout).toBe('')
    expect(out.stderr.trim()).toBe(
      'hark: the server did not answer POST /v1/messages within 1 s ' +
        '(request timeout; set HARK_REQUEST_TIMEOUT to change it)',
    )
    // Not retried: the bound is the whole wait, plus the process's start.
    expect(took).toBeGreaterThanOrEqual(1000)
    expect(took).toBeLessThan(10_000)
  })

  test('hark wait keeps polling a silent server until its own timeout (124)', async () => {
    const started = performance.now()
    const out = await cli.run(['wait', 'msg_x', '--timeout', '2', '--json'], {
      env: env({ HARK_REQUEST_TIMEOUT: '1' }),
    })
    expect(out.code).toBe(124)
    expect(out.json()).toEqual({ id: 'msg_x', status: 'timeout' })
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  test('a bad HARK_REQUEST_TIMEOUT is a usage error', async () => {
    const out = await cli.run(['send', 'x'], { env: env({ HARK_REQUEST_TIMEOUT: 'soon' }) })
    expect(out.code).toBe(2)
    expect(out.stderr).toContain('HARK_REQUEST_TIMEOUT must be a positive number of seconds')
  })
})
