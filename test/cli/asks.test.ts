import { describe, expect, test } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import { liveCli, type Spawned } from './live.ts'

const live = liveCli()

const hark = (args: string[], stdin?: string) => live.cli.run(args, { env: live.env, stdin })

/** Starts `hark ask ...` and resolves with the process and the question it sent. */
async function asking(args: string[]): Promise<{ run: Spawned; id: string; message: Message }> {
  const run = live.cli.spawn(['ask', ...args], { env: live.env })
  const [, id] = await run.stderrMatch(/asked (msg_\w+)/)
  const { messages } = await live.server.person.feed(live.server.channelId)
  const message = messages.find((m) => m.id === id) as Message
  return { run, id: id as string, message }
}

describe('hark ask', () => {
  test('--choice: waits, then prints the picked option', async () => {
    const { run, id, message } = await asking(['Deploy', 'now?', '--choice', 'yes, no'])
    expect(message.body).toEqual({
      text: 'Deploy now?',
      blocks: [{ type: 'choice', id: 'choice', options: [{ label: 'yes' }, { label: 'no' }] }],
    })
    expect(message.ask?.status).toBe('open')
    await Bun.sleep(200)
    await live.server.person.answer(id, 'yes')
    const done = await run.finished()
    expect(done.code).toBe(0)
    expect(done.stdout).toBe('yes\n')
  })

  test('--json prints { id, status, answer }; --multi answers an array', async () => {
    const { run, id, message } = await asking([
      'Which?',
      '--choice',
      'a,b,c',
      '--multi',
      '--title',
      'Targets',
      '--json',
    ])
    expect(message.body.title).toBe('Targets')
    expect(message.body.blocks?.[0]).toMatchObject({ multi: true })
    await live.server.person.answer(id, ['a', 'c'])
    const done = await run.finished()
    expect(done.code).toBe(0)
    expect(done.json()).toEqual({ id, status: 'answered', answer: ['a', 'c'] })
  })

  test('several inputs make a form; the answer is an object keyed by input id', async () => {
    const { run, id, message } = await asking([
      'Release?',
      '--confirm',
      'Ship it',
      '--text',
      'Notes',
      '--number',
      'Replicas',
      '--toggle',
      'Canary',
      '--json',
    ])
    expect(message.body.blocks?.map((b) => `${b.type}:${b.id}`)).toEqual([
      'confirm:confirm',
      'text_input:text',
      'number_input:number',
      'toggle:toggle',
    ])
    const answer = { confirm: true, text: 'go', number: 3, toggle: true }
    await live.server.person.answer(id, answer)
    expect((await run.finished()).json()).toEqual({ id, status: 'answered', answer })
  })

  test('the question text may come from stdin with "-"; --block gives any input', async () => {
    const out = live.cli.spawn(['ask', '--block', '{"type":"confirm","id":"go","label":"Go"}'], {
      env: live.env,
    })
    const [, id] = await out.stderrMatch(/asked (msg_\w+)/)
    await live.server.person.answer(id as string, true)
    const done = await out.finished()
    expect(done.stdout).toBe('true\n')
    const piped = await hark(
      ['ask', '-', '--confirm', 'OK', '--timeout', '0', '--json'],
      'Piped?\n',
    )
    const asked = piped.json<{ id: string }>()
    const { messages } = await live.server.person.feed(live.server.channelId)
    expect((messages.find((m) => m.id === asked.id) as Message).body.text).toBe('Piped?')
  })

  test('--timeout: exit 124 and {"status":"timeout"} with the id', async () => {
    const started = Date.now()
    const out = await hark(['ask', 'Anyone?', '--confirm', 'Here', '--timeout', '1', '--json'])
    expect(out.code).toBe(124)
    const result = out.json<{ id: string; status: string }>()
    expect(result).toEqual({ id: expect.stringMatching(/^msg_/), status: 'timeout' })
    expect(Date.now() - started).toBeLessThan(8000)
    expect(out.stderr).toContain(`hark wait ${result.id}`)
    // Without --json nothing is printed on stdout, and the code is the same.
    const human = await hark(['ask', 'Anyone?', '--confirm', 'Here', '--timeout', '0.2'])
    expect(human.code).toBe(124)
    expect(human.stdout).toBe('')
  })

  test('--expires-in: the defaults become the answer (status expired, exit 0)', async () => {
    const out = await hark([
      'ask',
      'Proceed?',
      '--block',
      '{"type":"choice","id":"c","options":[{"label":"yes"},{"label":"no"}],"default":"no"}',
      '--expires-in',
      '1',
      '--json',
    ])
    expect(out.code).toBe(0)
    expect(out.json()).toMatchObject({ status: 'expired', answer: 'no' })
    expect(out.stderr).toContain('expired')
  })

  test('a question without inputs, or a bad --timeout, is a usage error', async () => {
    expect((await hark(['ask', 'Hello?'])).code).toBe(2)
    expect((await hark(['ask', 'x', '--confirm', 'y', '--timeout', 'soon'])).code).toBe(2)
    expect((await hark(['ask', 'x', '--choice', ' , '])).code).toBe(2)
  })
})

describe('hark wait and cancel', () => {
  test('wait returns the answer, at once when it is already answered', async () => {
    const sent = await hark(['send', '--block', '{"type":"text_input","id":"t","label":"Name"}'])
    const id = sent.stdout.trim()
    const waiting = live.cli.spawn(['wait', id, '--json'], { env: live.env })
    await Bun.sleep(300)
    await live.server.person.answer(id, 'Ada')
    const done = await waiting.finished()
    expect(done.code).toBe(0)
    expect(done.json()).toEqual({ id, status: 'answered', answer: 'Ada' })
    const again = await hark(['wait', id])
    expect(again.code).toBe(0)
    expect(again.stdout).toBe('Ada\n')
  })

  test('wait --timeout: 124 and {"status":"timeout"}', async () => {
    const id = (
      await hark(['send', '--block', '{"type":"confirm","id":"c","label":"OK"}'])
    ).stdout.trim()
    const out = await hark(['wait', id, '--timeout', '0.5', '--json'])
    expect(out.code).toBe(124)
    expect(out.json()).toEqual({ id, status: 'timeout' })
  })

  test('cancel ends a wait with status cancelled (exit 1); a second cancel is 409 (exit 1)', async () => {
    const id = (
      await hark(['send', '--block', '{"type":"confirm","id":"c","label":"OK"}'])
    ).stdout.trim()
    const waiting = live.cli.spawn(['wait', id, '--json'], { env: live.env })
    await Bun.sleep(300)
    const cancelled = await hark(['cancel', id, '--json'])
    expect(cancelled.code).toBe(0)
    expect(cancelled.json<{ message: Message }>().message.ask?.status).toBe('cancelled')
    const done = await waiting.finished()
    expect(done.code).toBe(1)
    expect(done.json()).toEqual({ id, status: 'cancelled', answer: null })
    const twice = await hark(['cancel', id])
    expect(twice.code).toBe(1)
    expect(twice.stderr).toContain('already cancelled')
  })

  test('wait on an unknown id is exit 1; without an id exit 2', async () => {
    expect((await hark(['wait', 'msg_nope'])).code).toBe(1)
    expect((await hark(['wait'])).code).toBe(2)
  })

  test('Ctrl-C during a wait exits 130', async () => {
    const id = (
      await hark(['send', '--block', '{"type":"confirm","id":"c","label":"OK"}'])
    ).stdout.trim()
    const waiting = live.cli.spawn(['wait', id], { env: live.env })
    await Bun.sleep(400)
    waiting.proc.kill('SIGINT')
    expect((await waiting.finished()).code).toBe(130)
  })
})
