import { describe, expect, test } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import { liveCli } from './live.ts'

/**
 * `hark run -- COMMAND` (issue 16): the real CLI against a live loopback server. The command's
 * output passes through, a silent status is pinned while it runs, the result (with the tail of
 * the output, a file when long) is sent on exit, and hark exits with the command's code.
 */
const live = liveCli()

const hark = (args: string[], options: { stdin?: string; env?: Record<string, string> } = {}) =>
  live.cli.run(args, { env: { ...live.env, ...options.env }, stdin: options.stdin })

/** The agent's messages, newest last. */
async function messages(): Promise<Message[]> {
  const { messages } = await live.server.person.feed(live.server.channelId, { limit: 200 })
  return messages.filter((m): m is Message => 'sender' in m && m.sender === 'agent')
}

async function messageReported(stderr: string): Promise<Message> {
  const id = /reported: (msg_\w+)/.exec(stderr)?.[1]
  if (!id) throw new Error(`no message reported:\n${stderr}`)
  const found = (await messages()).find((m) => m.id === id)
  if (!found) throw new Error(`${id} is not in the feed`)
  return found
}

const pinKeys = async () =>
  (await live.server.agentClient(live.server.agentToken).pins()).pins.map((p) => p.key)

/** The first block of a kind, with the fields these tests read. */
interface SeenBlock {
  code: string
  file_id: string
  name: string
  options: { label: string }[]
}
const block = (m: Message, type: string) =>
  m.body.blocks?.find((b) => b.type === type) as SeenBlock | undefined

/** Polls until `find` returns something, for at most `ms`. */
async function eventually<T>(find: () => Promise<T | undefined>, what: string, ms = 10_000) {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const found = await find()
    if (found !== undefined) return found
    await Bun.sleep(50)
  }
  throw new Error(`timed out waiting for ${what}`)
}

describe('hark run', () => {
  test('success: output passes through, the result has the tail, the pin is gone', async () => {
    const out = await hark([
      'run',
      '--title',
      'Build',
      '--',
      'sh',
      '-c',
      'echo hello; echo warning >&2; printf "\\033[32mgreen\\033[0m\\n"',
    ])
    expect(out.code).toBe(0)
    expect(out.stdout).toBe('hello\n\u001b[32mgreen\u001b[0m\n')
    expect(out.stderr).toContain('warning')
    const m = await messageReported(out.stderr)
    expect(m.body.title).toBe('Build')
    expect(m.body.text).toMatch(/^✓ exited 0 after \d+\.\d s\n\$ sh -c /)
    expect(m.body.text).toContain('3 lines of output')
    // Two pipes: stdout's and stderr's lines arrive in either order.
    expect(block(m, 'code')?.code.split('\n').sort()).toEqual(['green', 'hello', 'warning'])
    expect(block(m, 'file')).toBeUndefined()
    expect(m.silent).toBeFalsy()
    expect(await pinKeys()).not.toContain('run:Build')
  })

  test("stdin is the command's; --json puts its stdout on stderr and the result on stdout", async () => {
    const out = await hark(['run', '--json', '--', 'cat'], { stdin: 'piped in\n' })
    expect(out.code).toBe(0)
    expect(out.stderr).toContain('piped in\n')
    const result = out.json<{ exit_code: number; message_id: string; lines: number }>()
    expect(result).toMatchObject({ exit_code: 0, signal: null, lines: 1, attempts: 1 })
    const m = (await messages()).find((x) => x.id === result.message_id) as Message
    expect(m.body.title).toBe('cat')
    expect(block(m, 'code')?.code).toBe('piped in')
  })

  test("a failing command: its exit code is hark run's, and the result says so", async () => {
    const out = await hark(['run', '--', 'sh', '-c', 'echo boom; exit 3'])
    expect(out.code).toBe(3)
    expect(out.stdout).toBe('boom\n')
    const m = await messageReported(out.stderr)
    expect(m.body.title).toBe("sh -c 'echo boom; exit 3'")
    expect(m.body.text).toMatch(/^✗ exit code 3 after /)
    expect(block(m, 'code')?.code).toBe('boom')
  })

  test('long output: the last 60 lines in the message, the kept tail as output.txt', async () => {
    const out = await hark(['run', '--', 'seq', '1', '5000'])
    expect(out.code).toBe(0)
    expect(out.stdout.split('\n').length).toBe(5001)
    const m = await messageReported(out.stderr)
    expect(m.body.text).toContain(
      '5,000 lines of output: the last 60 below, all of it in output.txt',
    )
    const code = block(m, 'code')?.code.split('\n')
    expect(code?.length).toBe(60)
    expect(code?.[0]).toBe('4941')
    expect(code?.[59]).toBe('5000')
    const file = block(m, 'file')
    expect(file).toMatchObject({ name: 'output.txt' })
    const all = await (
      await live.server.agentClient(live.server.agentToken).download(file?.file_id as string)
    ).text()
    expect(all.startsWith('1\n2\n')).toBe(true)
    expect(all.endsWith('4999\n5000\n')).toBe(true)

    // More than 64 KiB: only the last 64 KiB are kept, from a whole line on.
    const big = await hark(['run', '--', 'seq', '1', '100000'])
    expect(big.code).toBe(0)
    const bm = await messageReported(big.stderr)
    expect(bm.body.text).toContain('100,000 lines of output: the last 60 below, the last 64 KiB')
    const bigFile = block(bm, 'file')
    const tail = await (
      await live.server.agentClient(live.server.agentToken).download(bigFile?.file_id as string)
    ).text()
    expect(tail.length).toBeLessThanOrEqual(64 * 1024)
    expect(tail.length).toBeGreaterThan(60 * 1024)
    expect(tail.endsWith('99999\n100000\n')).toBe(true)
    const first = Number(tail.split('\n', 1)[0])
    expect(tail.startsWith(`${first}\n${first + 1}\n`)).toBe(true)
  })

  test('SIGTERM to hark run is passed on; the pinned status ticks, then the result is sent', async () => {
    const key = 'run:sleeper'
    const run = live.cli.spawn(['run', '--pin', key, '--title', 'Sleeper', '--', 'sleep', '30'], {
      env: { ...live.env, HARK_RUN_INTERVAL: '1' },
    })
    // The status is pinned, silent, and its elapsed time moves.
    const pinned = await eventually(async () => {
      const { pins } = await live.server.agentClient(live.server.agentToken).pins()
      const pin = pins.find((p) => p.key === key)
      return pin?.message.body.text?.includes('elapsed') ? pin : undefined
    }, 'the status to show the elapsed time')
    expect(pinned.message.silent).toBe(true)
    expect(pinned.message.body.title).toBe('Sleeper')
    expect(pinned.message.body.text).toMatch(/^running: sleep 30\n\d+\.\d s elapsed · 0 lines/)
    run.proc.kill('SIGTERM')
    const done = await run.finished()
    expect(done.code).toBe(143)
    const m = await messageReported(done.stderr)
    expect(m.body.text).toMatch(
      /^✗ killed by SIGTERM after .+ \(exit code 143\)\n\$ sleep 30\nno output$/,
    )
    expect(await pinKeys()).not.toContain(key)
  })

  test('Ctrl-C (SIGINT) is passed on too: 130, and the result is still sent', async () => {
    const run = live.cli.spawn(['run', '--pin', 'run:nap', '--', 'sleep', '30'], { env: live.env })
    await eventually(
      async () => ((await pinKeys()).includes('run:nap') ? true : undefined),
      'the status pin',
    )
    run.proc.kill('SIGINT')
    const done = await run.finished()
    expect(done.code).toBe(130)
    const m = await messageReported(done.stderr)
    expect(m.body.text).toContain('killed by SIGINT')
    expect(await pinKeys()).not.toContain('run:nap')
  })

  test('a command killed by a signal of its own: 128 + the signal', async () => {
    const out = await hark(['run', '--', 'sh', '-c', 'echo bye; kill -KILL $$'])
    expect(out.code).toBe(137)
    const m = await messageReported(out.stderr)
    expect(m.body.text).toContain('killed by SIGKILL')
  })

  test('a command that cannot start: 127, a clear message, and the person is told', async () => {
    const out = await hark(['run', '--', 'no-such-command-hark-run'])
    expect(out.code).toBe(127)
    expect(out.stderr).toContain('could not start: no-such-command-hark-run: command not found')
    const m = await messageReported(out.stderr)
    expect(m.body.text).toContain('could not start: no-such-command-hark-run: command not found')
    expect(await pinKeys()).not.toContain('run:no-such-command-hark-run')
  })

  test('usage: no command, or a bad pin key, is exit 2 and runs nothing', async () => {
    expect((await hark(['run'])).code).toBe(2)
    expect((await hark(['run', '--pin', 'a b', '--', 'true'])).code).toBe(2)
  })

  test('--ask-on-fail: the person answers retry, then skip; hark run exits 0', async () => {
    const counter = `${live.cli.home}/tries`
    const run = live.cli.spawn(
      ['run', '--ask-on-fail', '--', 'sh', '-c', `echo try >> ${counter}; echo failed; exit 5`],
      { env: live.env },
    )
    const [, first] = await run.stderrMatch(/asked the person[^\n]*\((msg_\w+)\)/)
    const question = (await messages()).find((m) => m.id === first) as Message
    expect(question.ask?.status).toBe('open')
    expect(question.body.text).toContain('exit code 5')
    expect(block(question, 'code')?.code).toBe('failed')
    expect(block(question, 'choice')?.options.map((o) => o.label)).toEqual([
      'retry',
      'skip',
      'abort',
    ])
    await live.server.person.answer(first as string, 'retry')
    const [, second] = await run.stderrMatch(
      /asked the person[^\n]*\(msg_\w+\)[\s\S]*asked the person[^\n]*\((msg_\w+)\)/,
    )
    expect(second).not.toBe(first)
    const again = (await messages()).find((m) => m.id === second) as Message
    expect(again.body.text).toContain('attempt 2')
    await live.server.person.answer(second as string, 'skip')
    const done = await run.finished()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe('failed\nfailed\n')
    expect(await Bun.file(counter).text()).toBe('try\ntry\n')
    expect(done.stderr).toContain('the person chose skip')
  })

  test('--ask-on-fail: abort exits with the failing code', async () => {
    const run = live.cli.spawn(['run', '--ask-on-fail', '--json', '--', 'sh', '-c', 'exit 6'], {
      env: live.env,
    })
    const [, id] = await run.stderrMatch(/asked the person[^\n]*\((msg_\w+)\)/)
    await live.server.person.answer(id as string, 'abort')
    const done = await run.finished()
    expect(done.code).toBe(6)
    expect(done.json()).toMatchObject({ exit_code: 6, decision: 'abort', message_id: id })
  })

  test('the server down: the command still runs and its exit code is kept', async () => {
    // A port that nothing listens on.
    const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
    const url = `http://127.0.0.1:${probe.port}`
    probe.stop(true)
    const out = await hark(['run', '--', 'sh', '-c', 'echo still here; exit 4'], {
      env: { HARK_URL: url, HARK_TOKEN: live.server.agentToken },
    })
    expect(out.code).toBe(4)
    expect(out.stdout).toBe('still here\n')
    expect(out.stderr).toContain('cannot send the result: cannot reach the server')
    expect(out.stderr).toMatch(/exit code 4 after/)
  }, 30_000)
})
