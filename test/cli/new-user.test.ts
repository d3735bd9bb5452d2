import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import { liveCli } from './live.ts'

/**
 * What a new user tripped over on the command line (issue 28, item 13): a network failure that
 * did not say where it went, `hark help install` that printed the top-level help, data piped
 * into a command that ignored it without a word, and `--json` failures with nothing on stdout.
 */
const live = liveCli()
const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

/** A loopback address where nothing listens (a server was there a moment ago). */
function deadUrl(): string {
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const url = `http://127.0.0.1:${server.port}`
  server.stop(true)
  return url
}

async function lastMessage(): Promise<Message> {
  const { messages } = await live.server.person.feed(live.server.channelId)
  return (messages as Message[]).at(-1) as Message
}

const HINT = 'stdin was not read'

describe('the hark command line, as a new user meets it', () => {
  test('a server that cannot be reached is named by the URL tried', async () => {
    const url = deadUrl()
    const out = await live.cli.run(['send', 'hello'], {
      env: { HARK_URL: url, HARK_TOKEN: live.server.agentToken },
    })
    expect(out.code).toBe(1)
    const lines = out.stderr.trim().split('\n')
    expect(lines.at(-1)).toBe(`hark: cannot reach the server at ${url}/v1/messages (ECONNREFUSED)`)
    // The retries before it say where, too.
    expect(lines[0]).toContain(`cannot reach the server at ${url}/v1/messages (ECONNREFUSED)`)
  })

  test('hark help X prints what hark X --help prints, for every command', async () => {
    for (const name of ['install', 'hook', 'serve', 'admin', 'send']) {
      const help = await live.cli.run(['help', name])
      const flag = await live.cli.run([name, '--help'])
      expect({ name, code: help.code }).toEqual({ name, code: 0 })
      expect(help.stdout).toBe(flag.stdout)
      expect(help.stderr).toBe(flag.stderr)
      expect(help.stdout + help.stderr).toContain(`hark ${name}`)
    }
    const unknown = await live.cli.run(['help', 'instal'])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toStartWith('hark: unknown command "instal"')
  })

  test('data piped into a command that does not read it: one line on stderr says to pass -', async () => {
    const ignored = await live.cli.run(['send', '--title', 'Log'], {
      env: live.env,
      stdin: 'make: *** [all] Error 2\n',
    })
    expect(ignored.code).toBe(0)
    const notes = ignored.stderr.split('\n').filter((l) => l.includes(HINT))
    expect(notes).toEqual([
      'hark: stdin was not read: the text came from the command line; pass "-" to send stdin (... | hark send - ...)',
    ])
    expect((await lastMessage()).body).toEqual({ title: 'Log' })

    const asked = await live.cli.run(['ask', 'Deploy?', '--confirm', 'Go', '--timeout', '0'], {
      env: live.env,
      stdin: 'context\n',
    })
    expect(asked.stderr).toContain('pass "-" to send stdin (... | hark ask - ...)')

    // Through a shell's pipe (above, stdin was a file): the same line.
    const shell = Bun.spawn(
      ['sh', '-c', 'printf "make: done\\n" | "$0" "$1" send --title Log', process.execPath, MAIN],
      { env: { ...process.env, ...live.env }, stdout: 'pipe', stderr: 'pipe' },
    )
    const [piped, pipedCode] = await Promise.all([new Response(shell.stderr).text(), shell.exited])
    expect(pipedCode).toBe(0)
    expect(piped).toContain('pass "-" to send stdin (... | hark send - ...)')

    // With "-" it is the text, and nothing is said.
    const read = await live.cli.run(['send', '-', '--title', 'Log'], {
      env: live.env,
      stdin: 'make: *** [all] Error 2\n',
    })
    expect(read.code).toBe(0)
    expect(read.stderr).not.toContain(HINT)
    expect((await lastMessage()).body).toMatchObject({
      title: 'Log',
      text: 'make: *** [all] Error 2',
    })
    // An empty pipe, and a pipe a harness holds open without writing: nothing to point out.
    const empty = await live.cli.run(['send', '--title', 'Log'], { env: live.env, stdin: '' })
    expect(empty.stderr).not.toContain(HINT)
    const held = live.cli.spawn(['send', '--title', 'Log'], { env: live.env, stdin: 'pipe' })
    const done = await held.finished()
    expect(done.code).toBe(0)
    expect(done.stderr).not.toContain(HINT)
  })

  test('--json failures print one JSON error on stdout, as well as the line on stderr', async () => {
    const unreachable = await live.cli.run(['send', 'hello', '--json'], {
      env: { HARK_URL: deadUrl(), HARK_TOKEN: live.server.agentToken },
    })
    expect(unreachable.code).toBe(1)
    const failure = unreachable.json<{ error: string; exit_code: number }>()
    expect(failure.error).toMatch(
      /^cannot reach the server at http:\/\/127\.0\.0\.1:\d+\/v1\/messages \(ECONNREFUSED\)$/,
    )
    expect(failure.exit_code).toBe(1)

    const usage = await live.cli.run(['send', 'hello', '--bogus', '--json'], { env: live.env })
    expect(usage.code).toBe(2)
    expect(usage.json()).toEqual({
      error: expect.stringContaining('--bogus'),
      exit_code: 2,
    })
    expect(usage.stderr).toContain('--bogus')

    const refused = await live.cli.run(['send', 'hello', '--json'], {
      env: { ...live.env, HARK_TOKEN: 'hark_agent_not-a-real-token' },
    })
    expect(refused.code).toBe(4)
    expect(refused.json()).toEqual({ error: expect.any(String), exit_code: 4 })

    const missing = await live.cli.run(['wait', 'msg_doesnotexist', '--json'], { env: live.env })
    expect(missing.code).toBe(1)
    expect(missing.json()).toEqual({ error: expect.any(String), exit_code: 1 })
  })
})
