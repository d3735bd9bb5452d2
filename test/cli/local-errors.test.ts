import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { liveCli, type RunOptions } from './live.ts'

/**
 * A failure of the agent's own machine (a file it cannot read, a directory it cannot write, a
 * bad flag) is said as one, naming the file and the cause, before anything is sent: "cannot
 * reach the server" would send an agent retrying what can never work (issue 16, defect 2).
 */
const live = liveCli()

/** Every request the server got, seen by a proxy in front of it. */
let requests: string[] = []
let proxy: ReturnType<typeof Bun.serve>
beforeAll(() => {
  proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const url = new URL(request.url)
      requests.push(`${request.method} ${url.pathname}`)
      const body = request.method === 'GET' ? undefined : await request.arrayBuffer()
      const { method, headers } = request
      return fetch(`${live.server.url}${url.pathname}${url.search}`, { method, headers, body })
    },
  })
})
afterAll(() => proxy.stop(true))
beforeEach(() => {
  requests = []
})

/** `hark` through the proxy, with file modes binding it (as root too). */
const hark = (args: string[], options: RunOptions = {}) =>
  live.cli.run(args, {
    env: { HARK_URL: proxy.url.origin, HARK_TOKEN: live.server.agentToken },
    unprivileged: true,
    ...options,
  })

/** A file that exists and cannot be read. */
function unreadable(name: string): string {
  const path = join(live.cli.home, name)
  writeFileSync(path, 'secret')
  chmodSync(path, 0o000)
  return path
}

describe('local failures are named as such, and nothing is sent', () => {
  test('the proxy sees what is sent', async () => {
    expect((await hark(['send', 'through the proxy'])).code).toBe(0)
    expect(requests).toEqual(['POST /v1/messages'])
  })

  test('an unreadable --file, --image or --markdown: the file and the cause, exit 1', async () => {
    const secret = unreadable('secret.txt')
    const readable = join(live.cli.home, 'readable.txt')
    writeFileSync(readable, 'fine')
    const folder = join(live.cli.home, 'folder')
    mkdirSync(folder)
    const denied = `hark: cannot read ${secret}: permission denied (EACCES)\n`
    const cases: [string[], string][] = [
      // The readable file first: it is not uploaded either.
      [['send', 'see attached', '--file', readable, '--file', secret], denied],
      [['send', 'a picture', '--image', secret], denied],
      [['send', '--markdown', secret], denied],
      [['upload', secret], denied],
      [['ask', 'Ship it?', '--confirm', 'Ship', '--file', secret], denied],
      [['pin', 'status', 'see file', '--file', secret], denied],
      [['send', 'x', '--file', folder], `hark: cannot read ${folder}: it is a directory\n`],
    ]
    for (const [args, stderr] of cases) {
      const out = await hark(args)
      expect({ args, code: out.code, stderr: out.stderr }).toEqual({ args, code: 1, stderr })
      expect(out.stdout).toBe('')
    }
    expect(requests).toEqual([])
  })

  test('bad JSON in a flag is a usage error (exit 2) naming the flag', async () => {
    const cases = [
      ['send', 'x', '--block', '{"type":'],
      ['ask', 'Q?', '--block', '[{'],
      ['pin', 'k', '--block', 'nope'],
      ['edit', 'msg_x', '--block-patch', '{'],
    ]
    for (const args of cases) {
      const out = await hark(args)
      expect({ args, code: out.code }).toEqual({ args, code: 2 })
      expect(out.stderr).toMatch(/^hark: --block(-patch)? is not valid JSON: .+\n$/)
    }
    expect(requests).toEqual([])
  })

  test('an unwritable download directory: named with the cause, exit 1, nothing fetched', async () => {
    const data = new Blob(['a,b\n'])
    const { file_id } = await live.server.agent.upload('data.csv', data, 'text/csv')
    const locked = join(live.cli.home, 'locked')
    mkdirSync(locked)
    chmodSync(locked, 0o555)
    const cases: [string[], RunOptions, string][] = [
      [['download', file_id, locked], {}, `cannot write in ${locked}`],
      [['download', file_id, join(locked, 'x.csv')], {}, `cannot write ${join(locked, 'x.csv')}`],
      [['download', file_id], { cwd: locked }, `cannot write in ${locked}`],
    ]
    for (const [args, options, what] of cases) {
      const out = await hark(args, options)
      const stderr = `hark: ${what}: permission denied (EACCES)\n`
      expect({ args, code: out.code, stderr: out.stderr }).toEqual({ args, code: 1, stderr })
    }
    expect(requests).toEqual([])
    expect(readdirSync(locked)).toEqual([])
    // Where it can write, it does, and leaves nothing else behind.
    const open = join(live.cli.home, 'open')
    mkdirSync(open)
    expect((await hark(['download', file_id, open])).code).toBe(0)
    expect(readdirSync(open)).toEqual(['data.csv'])
  })
})
