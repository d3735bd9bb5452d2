import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import type { TestServer } from '../harness.ts'
import { type Cli, type LiveCli, startLiveCli } from './live.ts'

// Each test gets a fresh server and home: the inbox's place is state.
let server: TestServer
let cli: Cli
let env: Record<string, string>
const hark = (args: string[]) => cli.run(args, { env })
const started: LiveCli[] = []

beforeEach(async () => {
  const live = await startLiveCli()
  started.push(live)
  ;({ server, cli, env } = live)
})
afterAll(async () => {
  for (const live of started) await live.close()
})

const say = async (text: string) =>
  (await server.person.send(server.channelId, { text })).message.id

async function stateOf(id: string) {
  const { messages } = await server.person.feed(server.channelId)
  return (messages.find((m) => m.id === id) as Message).state
}

interface InboxJson {
  messages: Message[]
  cursor: number
}

describe('hark inbox', () => {
  test("prints the person's new messages, marks them seen, and moves on", async () => {
    const first = await say('please rebase')
    const second = await say('and run the tests')
    await hark(['send', 'an agent message is not in the inbox'])
    const out = await hark(['inbox', '--json'])
    expect(out.code).toBe(0)
    const read = out.json<InboxJson>()
    expect(read.messages.map((m) => [m.id, m.body.text, m.state])).toEqual([
      [first, 'please rebase', 'seen'],
      [second, 'and run the tests', 'seen'],
    ])
    expect(read.cursor).toBeGreaterThan(0)
    expect(await stateOf(first)).toBe('seen')
    // Read: the next inbox has nothing new.
    const again = await hark(['inbox', '--json'])
    expect(again.json<InboxJson>().messages).toEqual([])
    const human = await hark(['inbox'])
    expect(human.stdout).toBe('')
    expect(human.stderr).toContain('no new messages')
    const third = await say('one more')
    const line = (await hark(['inbox'])).stdout.trim()
    expect(line).toStartWith(third)
    expect(line).toContain('one more')
  })

  test('--peek leaves them unseen and shows them again', async () => {
    const id = await say('peek at me')
    const peeked = await hark(['inbox', '--peek', '--json'])
    expect(peeked.json<InboxJson>().messages.map((m) => m.id)).toEqual([id])
    expect(await stateOf(id)).toBeNull()
    const read = await hark(['inbox', '--json'])
    expect(read.json<InboxJson>().messages.map((m) => [m.id, m.state])).toEqual([[id, 'seen']])
  })

  test('messages acknowledged working or done stay out; --all starts over', async () => {
    const a = await say('task a')
    const b = await say('task b')
    await hark(['inbox'])
    const ack = await hark(['ack', a, 'working', '--json'])
    expect(ack.code).toBe(0)
    expect(ack.json<{ message: Message }>().message.state).toBe('working')
    expect((await hark(['ack', b, 'done'])).stdout.trim()).toBe(`${b}: done`)
    expect(await stateOf(a)).toBe('working')
    expect((await hark(['inbox', '--json'])).json<InboxJson>().messages).toEqual([])
    await hark(['ack', a, 'seen'])
    const all = await hark(['inbox', '--all', '--json'])
    expect(all.json<InboxJson>().messages.map((m) => m.id)).toEqual([a])
  })

  test('--wait holds until a message arrives', async () => {
    const reading = cli.spawn(['inbox', '--wait', '20', '--json'], { env })
    await Bun.sleep(500)
    const id = await say('late message')
    const done = await reading.finished()
    expect(done.code).toBe(0)
    expect(done.json<InboxJson>().messages.map((m) => m.id)).toEqual([id])
  })

  test('--follow streams one JSON line per message until Ctrl-C (exit 130)', async () => {
    const early = await say('before following')
    const follow = cli.spawn(['inbox', '--follow', '--json'], { env })
    expect(JSON.parse(await follow.nextLine()).id).toBe(early)
    const later = await say('while following')
    const line = JSON.parse(await follow.nextLine())
    expect(line).toMatchObject({ id: later, body: { text: 'while following' }, state: 'seen' })
    follow.proc.kill('SIGINT')
    const done = await follow.finished()
    expect(done.code).toBe(130)
    expect(done.stdout.trim().split('\n')).toHaveLength(2)
  })

  test('an unwritable config directory: the messages still show; stderr says the place was not saved', async () => {
    const id = await say('are you there?')
    // Nothing can be made under /proc, by root either (no mode bit stops root, and test boxes
    // often run as root): the config directory cannot be written, as in a read-only home or an
    // agent's sandbox. The error it gives has a `.code`, once taken for a network error.
    const config = '/proc/hark-unwritable/hark/config.json'
    const readOnly = { ...env, XDG_CONFIG_HOME: '/proc/hark-unwritable' }
    const out = await cli.run(['inbox', '--json'], { env: readOnly })
    expect(out.code).toBe(0)
    expect(out.json<InboxJson>().messages.map((m) => m.id)).toEqual([id])
    expect(out.stderr).toContain(`cannot save where the inbox got to: cannot write ${config}`)
    expect(out.stderr).not.toContain('no new messages')
    expect(out.stderr).not.toContain('cannot reach the server')
    // Not kept, so the next read shows it again (said once, and not mistaken for an outage).
    const follow = cli.spawn(['inbox', '--follow'], { env: readOnly })
    expect(await follow.nextLine()).toStartWith(id)
    const later = await say('still there?')
    expect(await follow.nextLine()).toStartWith(later)
    follow.proc.kill('SIGINT')
    const done = await follow.finished()
    expect(done.stdout.trim().split('\n')).toHaveLength(2)
    expect(done.stderr.match(/cannot save where the inbox got to/g)).toHaveLength(1)
  })

  test('ack: a bad state is exit 2; the agent cannot ack its own message (exit 1)', async () => {
    const id = await say('x')
    expect((await hark(['ack', id, 'finished'])).code).toBe(2)
    expect((await hark(['ack', id])).code).toBe(2)
    const own = (await hark(['send', 'mine'])).stdout.trim()
    expect((await hark(['ack', own, 'done'])).code).toBe(1)
  })
})
