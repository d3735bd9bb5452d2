import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Block } from '../../src/messages/schema.ts'
import { addPersonToken } from '../../src/people/service.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'
import { question } from './fixtures.ts'

let s: TestServer
beforeEach(async () => {
  s = await startTestServer()
})
afterEach(() => s.close())

const confirm: Block = { type: 'confirm', id: 'go', label: 'Go' }
const text: Block = { type: 'text_input', id: 'why' }

describe('open', () => {
  test('a message with an input block is an open question', async () => {
    const message = await question(s, [{ type: 'markdown', text: 'hi' }, confirm])
    expect(message.sender).toBe('agent')
    expect(message.ask).toEqual({ status: 'open' })
    const read = await s.agent.ask(message.id)
    expect(read).toEqual({ message, answer: null })
  })

  test('a message without input blocks is not a question', async () => {
    const { message } = await s.agent.send({
      body: { text: 'fyi', blocks: [{ type: 'html', id: 'h', html: '<p>x</p>' }] },
    })
    expect(message.ask).toBeUndefined()
    expect((await s.agent.asks()).asks).toEqual([])
  })

  test('expires_in sets ask.expires_at', async () => {
    const message = await question(s, [confirm], { expires_in: 60 })
    expect(message.ask?.status).toBe('open')
    expect(message.ask?.expires_at).toBe(message.created_at + 60_000)
  })
})

describe('open → answered', () => {
  test('answered_at and ask.answer are set; the question leaves the open list', async () => {
    const message = await question(s, [text])
    const before = Date.now()
    const { message: after, answer } = await s.person.answer(message.id, 'why not')
    expect(answer).toBe('why not')
    expect(after.ask?.status).toBe('answered')
    expect(after.ask?.answer).toBe('why not')
    expect(after.ask?.answered_at).toBeGreaterThanOrEqual(before - 1)
    expect(after.updated_at).toBeGreaterThanOrEqual(message.updated_at)
    expect(after.body).toEqual(message.body)
    expect((await s.agent.asks()).asks).toEqual([])
    expect(await s.agent.ask(message.id)).toEqual({ message: after, answer: 'why not' })
  })

  test('the owner answers in any of their channels', async () => {
    const other = await s.addChannel('Second agent')
    const { message } = await other.agent.send({ body: { blocks: [confirm] } })
    expect((await s.person.answer(message.id, true)).answer).toBe(true)
    expect((await other.agent.ask(message.id)).message.ask?.status).toBe('answered')
  })
})

describe('open → cancelled', () => {
  test('cancel answers { message } with the cancelled question', async () => {
    const message = await question(s, [text])
    const res = await s.agent.cancel(message.id)
    expect(Object.keys(res)).toEqual(['message'])
    expect(res.message.id).toBe(message.id)
    expect(res.message.ask?.status).toBe('cancelled')
    expect(res.message.ask?.answered_at).toBeUndefined()
    expect(res.message.ask?.answer).toBeUndefined()
    expect(await s.agent.ask(message.id)).toEqual({ message: res.message, answer: null })
    expect((await s.agent.asks()).asks).toEqual([])
  })
})

describe('409: a question that is not open', () => {
  test('answered: cancel, answer again and edit its inputs are 409', async () => {
    const message = await question(s, [text])
    await s.person.answer(message.id, 'first')
    await failsWith(s.agent.cancel(message.id), 409)
    await failsWith(s.person.answer(message.id, 'second'), 409)
    await failsWith(s.agent.edit(message.id, { block_patches: [{ id: 'why', label: 'L' }] }), 409)
    await failsWith(s.agent.replace(message.id, { blocks: [confirm] }), 409)
    const read = await s.agent.ask(message.id)
    expect(read.answer).toBe('first')
    expect(read.message.ask?.status).toBe('answered')
  })

  test('answered: its text can still be edited', async () => {
    const message = await question(s, [text])
    await s.person.answer(message.id, 'x')
    const { message: edited } = await s.agent.edit(message.id, { text: 'Done, thanks' })
    expect(edited.body.text).toBe('Done, thanks')
    expect(edited.ask?.status).toBe('answered')
    expect(edited.ask?.answer).toBe('x')
  })

  test('cancelled: cancel and answer are 409', async () => {
    const message = await question(s, [text])
    await s.agent.cancel(message.id)
    await failsWith(s.agent.cancel(message.id), 409)
    await failsWith(s.person.answer(message.id, 'late'), 409)
    expect((await s.agent.ask(message.id)).message.ask?.status).toBe('cancelled')
  })

  test('expired: cancel and answer are 409', async () => {
    const message = await question(s, [text], { expires_in: 0.05 })
    const read = await s.agent.ask(message.id, 5)
    expect(read.message.ask?.status).toBe('expired')
    await failsWith(s.agent.cancel(message.id), 409)
    await failsWith(s.person.answer(message.id, 'late'), 409)
  })
})

describe('404', () => {
  test('cancel of a non-question, an unknown id, the person message, another channel', async () => {
    const { message: plain } = await s.agent.send({ body: { text: 'no inputs' } })
    await failsWith(s.agent.cancel(plain.id), 404)
    await failsWith(s.agent.cancel('msg_doesnotexist'), 404)
    const { message: human } = await s.person.send(s.channelId, { text: 'hello agent' })
    await failsWith(s.agent.cancel(human.id), 404)
    const other = await s.addChannel()
    const { message: theirs } = await other.agent.send({ body: { blocks: [confirm] } })
    await failsWith(s.agent.cancel(theirs.id), 404)
    expect((await other.agent.ask(theirs.id)).message.ask?.status).toBe('open')
  })

  test('GET /v1/asks/:id of a non-question, an unknown id, another channel', async () => {
    const { message: plain } = await s.agent.send({ body: { text: 'no inputs' } })
    await failsWith(s.agent.ask(plain.id), 404)
    await failsWith(s.agent.ask(plain.id, 1), 404)
    await failsWith(s.agent.ask('nope'), 404)
    const other = await s.addChannel()
    const { message: theirs } = await other.agent.send({ body: { blocks: [confirm] } })
    await failsWith(s.agent.ask(theirs.id), 404)
  })

  test('answer of a non-question, an unknown id', async () => {
    const { message: plain } = await s.agent.send({ body: { text: 'no inputs' } })
    await failsWith(s.person.answer(plain.id, true), 404)
    await failsWith(s.person.answer('msg_unknown', true), 404)
  })

  test('a deleted question is gone for ask, cancel and answer', async () => {
    const message = await question(s, [confirm])
    await s.agent.remove(message.id)
    await failsWith(s.agent.ask(message.id), 404)
    await failsWith(s.agent.cancel(message.id), 404)
    await failsWith(s.person.answer(message.id, true), 404)
    expect((await s.agent.asks()).asks).toEqual([])
  })
})

describe('GET /v1/asks', () => {
  test('lists only the open questions of this channel, oldest first', async () => {
    const a = await question(s, [confirm])
    const answered = await question(s, [confirm])
    const cancelled = await question(s, [confirm])
    const b = await question(s, [text], { expires_in: 3600 })
    await s.agent.send({ body: { text: 'not a question' } })
    const other = await s.addChannel()
    await other.agent.send({ body: { blocks: [confirm] } })
    await s.person.answer(answered.id, true)
    await s.agent.cancel(cancelled.id)
    const res = await s.agent.asks()
    expect(Object.keys(res)).toEqual(['asks'])
    expect(res.asks.map((m) => m.id)).toEqual([a.id, b.id])
    expect(res.asks.every((m) => m.ask?.status === 'open')).toBe(true)
    expect(res.asks[1]).toEqual(b)
    expect((await other.agent.asks()).asks).toHaveLength(1)
  })

  test('an empty channel answers { asks: [] }', async () => {
    expect(await s.agent.asks()).toEqual({ asks: [] })
  })
})

describe("the person's side", () => {
  test("another person cannot answer or read the owner's channel", async () => {
    const message = await question(s, [confirm])
    const stranger = await s.addPerson('b@example.com')
    await failsWith(stranger.answer(message.id, true), 404)
    await failsWith(stranger.feed(s.channelId), 404)
    await failsWith(stranger.feed(s.channelId, { wait: 1 }), 404)
    await failsWith(stranger.send(s.channelId, { text: 'hi' }), 404)
    expect((await stranger.channels()).channels).toEqual([])
    expect((await s.agent.ask(message.id)).message.ask?.status).toBe('open')
    // The owner still can.
    expect((await s.person.answer(message.id, true)).answer).toBe(true)
  })

  test('a stranger gets the same 404 for an existing and an unknown question', async () => {
    const message = await question(s, [confirm])
    const stranger = await s.addPerson('b@example.com')
    const a = await failsWith(stranger.answer(message.id, true), 404)
    const b = await failsWith(stranger.answer('msg_unknown', true), 404)
    expect(a.error).toBe(b.error)
  })

  test('an agent token on /v1/app routes is 403', async () => {
    const message = await question(s, [confirm])
    const { token } = await s.addChannel()
    const asPerson = s.personClient(token)
    await failsWith(asPerson.answer(message.id, true), 403)
    await failsWith(asPerson.feed(s.channelId), 403)
    await failsWith(asPerson.channels(), 403)
    expect((await s.agent.ask(message.id)).message.ask?.status).toBe('open')
  })

  test('a person token on the agent question routes is 403', async () => {
    const message = await question(s, [confirm])
    const { token } = await addPersonToken(s.ctx, { email: s.ownerEmail })
    const asAgent = s.agentClient(token)
    await failsWith(asAgent.asks(), 403)
    await failsWith(asAgent.ask(message.id), 403)
    await failsWith(asAgent.cancel(message.id), 403)
  })

  test('no token, or a wrong one, is 401', async () => {
    const message = await question(s, [confirm])
    for (const token of [undefined, 'hark_not_a_real_token']) {
      const agent = s.agentClient(token)
      const person = s.personClient(token)
      await failsWith(agent.asks(), 401)
      await failsWith(agent.ask(message.id), 401)
      await failsWith(agent.ask(message.id, 5), 401)
      await failsWith(agent.cancel(message.id), 401)
      await failsWith(person.answer(message.id, true), 401)
      await failsWith(person.feed(s.channelId), 401)
    }
    expect((await s.agent.ask(message.id)).message.ask?.status).toBe('open')
  })
})
