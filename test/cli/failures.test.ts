import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { makeCli, removeHome } from './live.ts'

/**
 * A failure nobody foresaw (a bug, an answer of a shape never expected) is one line on stderr,
 * exit 1: not a stack trace, and not "cannot reach the server" when the server was reached
 * (issue 16, defect 5). HARK_DEBUG=1 adds where it happened, for a bug report.
 */
const cli = makeCli()
/** Answers every request 200 with a web page: a HARK_URL that is not a Hark server. */
let notHark: ReturnType<typeof Bun.serve>
beforeAll(() => {
  notHark = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response('<!doctype html><title>Hello</title>', { status: 200 }),
  })
})
afterAll(() => {
  notHark.stop(true)
  removeHome(cli)
})

describe('an unexpected failure', () => {
  test('one line on stderr, exit 1; the stack only with HARK_DEBUG=1', async () => {
    const env = { HARK_URL: notHark.url.origin, HARK_TOKEN: 'hark_agent_x' }
    const out = await cli.run(['send', 'hello', '--json'], { env })
    expect(out.code).toBe(1)
    expect(out.json()).toEqual({
      error: expect.stringMatching(/^unexpected error: /),
      exit_code: 1,
    })
    expect(out.stderr).toStartWith('hark: unexpected error: ')
    expect(out.stderr.trimEnd().split('\n')).toHaveLength(1)
    expect(out.stderr).not.toContain('cannot reach the server')
    const debug = await cli.run(['send', 'hello'], { env: { ...env, HARK_DEBUG: '1' } })
    expect(debug.code).toBe(1)
    expect(debug.stderr).toStartWith(out.stderr)
    expect(debug.stderr).toMatch(/\n\s+at .+:\d+:\d+/)
  })
})
