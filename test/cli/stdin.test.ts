import { describe, expect, test } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import { liveCli, type Ran, type Spawned } from './live.ts'

/**
 * Agent harnesses run commands with stdin a pipe they hold open and never write to. A command
 * must not wait on it: stdin is read only with "-", or when the command line gives nothing
 * else to send; and a read of stdin ends with the command's timeout (issue 16, defect 3).
 */
const live = liveCli()

/** `hark ...args` with stdin an open pipe nobody writes to or closes. */
const harnessed = (args: string[]) => live.cli.spawn(args, { env: live.env, stdin: 'pipe' })

/**
 * The run's end, which must come within `ms`; past it the process is killed and the test
 * fails, instead of hanging. The bound leaves room for a loaded machine.
 */
async function endsWithin(run: Spawned, ms: number): Promise<Ran & { tookMs: number }> {
  const started = Date.now()
  const timer = setTimeout(() => run.proc.kill('SIGKILL'), ms)
  const done = await run.finished()
  clearTimeout(timer)
  const tookMs = Date.now() - started
  if (tookMs >= ms) throw new Error(`still running after ${ms} ms; stderr:\n${done.stderr}`)
  return { ...done, tookMs }
}

async function feed(): Promise<Message[]> {
  const { messages } = await live.server.person.feed(live.server.channelId)
  return messages as Message[]
}

describe('a command run with stdin an open, silent pipe', () => {
  test('ask with inputs and --timeout: asks, then ends at its timeout (124)', async () => {
    const run = harnessed(['ask', '--confirm', 'Deploy', '--timeout', '2', '--json'])
    const done = await endsWithin(run, 15_000)
    expect(done.code).toBe(124)
    const { id, status } = done.json<{ id: string; status: string }>()
    expect(status).toBe('timeout')
    expect(done.tookMs).toBeGreaterThanOrEqual(2000)
    const asked = (await feed()).find((m) => m.id === id)
    expect(asked?.body.blocks?.[0]).toMatchObject({ type: 'confirm', label: 'Deploy' })
  })

  test('ask - (text from stdin): stdin still open at the timeout is 124, nothing asked', async () => {
    const before = (await feed()).length
    const run = harnessed(['ask', '-', '--confirm', 'Deploy', '--timeout', '2', '--json'])
    const done = await endsWithin(run, 15_000)
    expect(done.code).toBe(124)
    expect(done.json()).toEqual({
      error: expect.stringContaining('stdin was still open'),
      exit_code: 124,
    })
    expect(done.stderr).toContain('stdin was still open when --timeout ran out: nothing was sent')
    expect(await feed()).toHaveLength(before)
  })

  test('send and pin with a title do not read it', async () => {
    const sent = await endsWithin(harnessed(['send', '--title', 'Build done', '--json']), 15_000)
    expect(sent.code).toBe(0)
    const { message } = sent.json<{ message: Message }>()
    expect(message.body).toEqual({ title: 'Build done' })
    const pinned = await endsWithin(harnessed(['pin', 'status', '--title', 'Green']), 15_000)
    expect(pinned.code).toBe(0)
  })

  test('wait, inbox --wait and secret end at their timeouts', async () => {
    const asked = await live.cli.run(
      ['send', '--block', '{"type":"confirm","id":"c","label":"Go?"}'],
      {
        env: live.env,
      },
    )
    // A question the server accepts: a wait on a failed send would test nothing.
    expect(asked.code).toBe(0)
    const id = asked.stdout.trim()
    const runs = [
      harnessed(['wait', id, '--timeout', '1']),
      harnessed(['inbox', '--wait', '1', '--json']),
      harnessed(['secret', 'TOKEN', '--print', '--timeout', '1']),
    ]
    const codes = []
    for (const run of runs) codes.push((await endsWithin(run, 15_000)).code)
    expect(codes).toEqual([124, 0, 124])
  })
})
