import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { issueToken } from '../../src/access/tokens/service.ts'
import type { AgentClient } from '../../src/agent/client.ts'
import type { ChannelRow } from '../../src/channels/store.ts'
import type { UserRow } from '../../src/people/store.ts'
import { failsWith, sleep, startTestServer, type TestServer } from '../harness.ts'
import { cursorNow, parked, question, text, timed, track } from './fixtures.ts'

let s: TestServer
beforeEach(async () => {
  s = await startTestServer()
})
afterEach(() => s.close())

type AskResult = Awaited<ReturnType<TestServer['agent']['ask']>>

/** More agent tokens of the test channel, each with its own count of held polls. */
async function moreAgents(server: TestServer, n: number) {
  const channel = (await server.ctx.store.channels.byId(server.channelId)) as ChannelRow
  const user = (await server.ctx.store.users.byId(channel.user_id)) as UserRow
  const agents: AgentClient[] = []
  for (let i = 0; i < n; i++) {
    const { token } = await issueToken(server.ctx, 'agent', user, channel, `extra ${i}`)
    agents.push(server.agentClient(token))
  }
  return agents
}

describe('GET /v1/asks/:id?wait', () => {
  test('wakes on the answer, well before the wait is over', async () => {
    const message = await question(s, [text])
    const poll = s.agent.ask(message.id, 10)
    await parked(s, 1)
    const { value, ms } = await timed(s.person.answer(message.id, 'now').then(() => poll))
    expect(ms).toBeLessThan(2000)
    expect(value.answer).toBe('now')
    expect(value.message.ask?.status).toBe('answered')
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('wakes on cancel with answer null', async () => {
    const message = await question(s, [text])
    const poll = s.agent.ask(message.id, 10)
    await parked(s, 1)
    const { value, ms } = await timed(s.agent.cancel(message.id).then(() => poll))
    expect(ms).toBeLessThan(2000)
    expect(value).toMatchObject({ answer: null, message: { ask: { status: 'cancelled' } } })
  })

  test('an elapsed wait answers { message, answer: null } with the question open', async () => {
    const message = await question(s, [text])
    const { value, ms } = await timed(s.agent.ask(message.id, 0.3))
    expect(value).toEqual({ message, answer: null })
    expect(ms).toBeGreaterThanOrEqual(200)
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('a question that is no longer open answers at once', async () => {
    const message = await question(s, [text])
    await s.person.answer(message.id, 'done')
    const { value, ms } = await timed(s.agent.ask(message.id, 10))
    expect(value.answer).toBe('done')
    expect(ms).toBeLessThan(2000)
  })

  test('wait=0 and no wait answer at once', async () => {
    const message = await question(s, [text])
    expect(await s.agent.ask(message.id, 0)).toEqual({ message, answer: null })
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('an edit of the open question does not end the wait', async () => {
    const message = await question(s, [text])
    const poll = track(s.agent.ask(message.id, 10))
    await parked(s, 1)
    await s.agent.edit(message.id, { text: 'Still waiting' })
    await s.agent.send({ body: { text: 'unrelated' } })
    const other = await question(s, [text])
    await s.person.answer(other.id, 'not this one')
    await sleep(100)
    expect(poll.settled()).toBe(false)
    expect(s.ctx.waiters.size).toBe(1)
    await s.person.answer(message.id, 'this one')
    const value = await poll.promise
    expect(value.answer).toBe('this one')
    expect(value.message.body.text).toBe('Still waiting')
  })

  test('deleting the question ends the wait with 404', async () => {
    const message = await question(s, [text])
    const poll = s.agent.ask(message.id, 10)
    await parked(s, 1)
    await s.agent.remove(message.id)
    await failsWith(poll, 404)
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('wait above 55 is accepted and still wakes', async () => {
    const message = await question(s, [text])
    const poll = s.agent.ask(message.id, 120)
    await parked(s, 1)
    await s.person.answer(message.id, 'ok')
    expect((await poll).answer).toBe('ok')
  })

  test('one answer wakes every waiter on the question', async () => {
    const message = await question(s, [text])
    // 50 waiters: more than one token may hold (MAX_HELD_POLLS), so three tokens of the channel.
    const agents = [s.agent, ...(await moreAgents(s, 2))]
    const polls = Array.from(
      { length: 50 },
      (_, i) => agents[i % 3]?.ask(message.id, 10) as Promise<AskResult>,
    )
    await parked(s, 50)
    const { value, ms } = await timed(
      s.person.answer(message.id, 'all').then(() => Promise.all(polls)),
    )
    expect(ms).toBeLessThan(3000)
    expect(value.every((r) => r.answer === 'all')).toBe(true)
    expect(s.ctx.waiters.size).toBe(0)
  })
})

describe('GET /v1/messages?wait', () => {
  test('wakes on an agent send', async () => {
    const cursor = await cursorNow(s)
    const poll = s.agent.feed({ since: cursor, wait: 10 })
    await parked(s, 1)
    const { value, ms } = await timed(
      s.agent.send({ body: { text: 'hello' } }).then(async (r) => ({ sent: r, got: await poll })),
    )
    expect(ms).toBeLessThan(2000)
    expect(value.got.messages).toEqual([value.sent.message])
    expect(value.got.cursor).toBeGreaterThan(cursor)
  })

  test("wakes on the person's message", async () => {
    const cursor = await cursorNow(s)
    const poll = s.agent.feed({ since: cursor, wait: 10, peek: true })
    await parked(s, 1)
    const { message } = await s.person.send(s.channelId, { text: 'from the person' })
    const got = await poll
    expect(got.messages).toEqual([message])
    expect(message.sender).toBe('human')
  })

  test("with sender=human, an agent send does not end the wait; the person's message does", async () => {
    const cursor = await cursorNow(s)
    const poll = track(s.agent.feed({ since: cursor, wait: 10, sender: 'human' }))
    await parked(s, 1)
    await s.agent.send({ body: { text: 'from the agent' } })
    await question(s, [text])
    await sleep(100)
    expect(poll.settled()).toBe(false)
    expect(s.ctx.waiters.size).toBe(1)
    const { message } = await s.person.send(s.channelId, { text: 'from the person' })
    const got = await poll.promise
    expect(got.messages.map((m) => m.id)).toEqual([message.id])
    // Read without peek: marked seen as it was read.
    expect(got.messages[0]).toMatchObject({ sender: 'human', state: 'seen' })
  })

  test('wakes on an answer', async () => {
    const message = await question(s, [text])
    const cursor = await cursorNow(s)
    const poll = s.agent.feed({ since: cursor, wait: 10 })
    await parked(s, 1)
    await s.person.answer(message.id, 'yes')
    const got = await poll
    expect(got.messages).toHaveLength(1)
    expect(got.messages[0]).toMatchObject({
      id: message.id,
      ask: { status: 'answered', answer: 'yes' },
    })
  })

  test('wakes on a cancel', async () => {
    const message = await question(s, [text])
    const cursor = await cursorNow(s)
    const poll = s.agent.feed({ since: cursor, wait: 10 })
    await parked(s, 1)
    await s.agent.cancel(message.id)
    expect((await poll).messages[0]).toMatchObject({ ask: { status: 'cancelled' } })
  })

  test('wakes on an edit', async () => {
    const { message } = await s.agent.send({ body: { text: 'v1' } })
    const cursor = await cursorNow(s)
    const poll = s.agent.feed({ since: cursor, wait: 10 })
    await parked(s, 1)
    await s.agent.edit(message.id, { text: 'v2' })
    const got = await poll
    expect(got.messages).toHaveLength(1)
    expect(got.messages[0]).toMatchObject({ id: message.id, body: { text: 'v2' } })
  })

  test('wakes on a delete, with a tombstone', async () => {
    const { message } = await s.agent.send({ body: { text: 'soon gone' } })
    const cursor = await cursorNow(s)
    const poll = s.agent.feed({ since: cursor, wait: 10 })
    await parked(s, 1)
    await s.agent.remove(message.id)
    expect((await poll).messages).toEqual([{ id: message.id, deleted: true }])
  })

  test('an elapsed wait answers { messages: [], cursor } with the same cursor', async () => {
    await s.agent.send({ body: { text: 'old news' } })
    const cursor = await cursorNow(s)
    const { value, ms } = await timed(s.agent.feed({ since: cursor, wait: 0.3 }))
    expect(value).toEqual({ messages: [], cursor, has_more: false })
    expect(ms).toBeGreaterThanOrEqual(200)
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('changes already there answer at once', async () => {
    const cursor = await cursorNow(s)
    await s.agent.send({ body: { text: 'already here' } })
    const { value, ms } = await timed(s.agent.feed({ since: cursor, wait: 10 }))
    expect(value.messages).toHaveLength(1)
    expect(ms).toBeLessThan(2000)
  })

  test('another channel does not wake this one', async () => {
    const cursor = await cursorNow(s)
    const poll = track(s.agent.feed({ since: cursor, wait: 10 }))
    await parked(s, 1)
    const other = await s.addChannel()
    await other.agent.send({ body: { text: 'elsewhere' } })
    await sleep(100)
    expect(poll.settled()).toBe(false)
    await s.agent.send({ body: { text: 'here' } })
    expect((await poll.promise).messages).toHaveLength(1)
  })

  test('wait above 55 is accepted and still wakes', async () => {
    const cursor = await cursorNow(s)
    const poll = s.agent.feed({ since: cursor, wait: 120 })
    await parked(s, 1)
    await s.agent.send({ body: { text: 'wake up' } })
    expect((await poll).messages).toHaveLength(1)
  })

  test('200 concurrent waiters are all woken by one send', async () => {
    const cursor = await cursorNow(s)
    const agents = [s.agent, ...(await moreAgents(s, 9))]
    const polls = Array.from(
      { length: 200 },
      (_, i) =>
        agents[i % 10]?.feed({ since: cursor, wait: 10 }) as ReturnType<typeof s.agent.feed>,
    )
    await parked(s, 200)
    const { value, ms } = await timed(
      s.agent.send({ body: { text: 'everyone' } }).then(async (r) => ({
        sent: r.message,
        got: await Promise.all(polls),
      })),
    )
    expect(ms).toBeLessThan(5000)
    for (const got of value.got) expect(got.messages).toEqual([value.sent])
    expect(s.ctx.waiters.size).toBe(0)
  })
})

describe("the person's feed /v1/app/channels/:id/messages?wait", () => {
  test('wakes on an agent send', async () => {
    const cursor = await cursorNow(s)
    const poll = s.person.feed(s.channelId, { since: cursor, wait: 10 })
    await parked(s, 1)
    const { value, ms } = await timed(
      s.agent.send({ body: { text: 'for you' } }).then(async (r) => ({ sent: r, got: await poll })),
    )
    expect(ms).toBeLessThan(2000)
    expect(value.got.messages).toEqual([value.sent.message])
  })

  test('wakes on a new question, and on its expiry', async () => {
    const cursor = await cursorNow(s)
    const poll = s.person.feed(s.channelId, { since: cursor, wait: 10 })
    await parked(s, 1)
    const message = await question(s, [text], { expires_in: 0.2 })
    const first = await poll
    expect(first.messages).toEqual([message])
    const second = await s.person.feed(s.channelId, { since: first.cursor, wait: 10 })
    expect(second.messages[0]).toMatchObject({ id: message.id, ask: { status: 'expired' } })
  })

  test('an elapsed wait answers the same cursor', async () => {
    const cursor = await cursorNow(s)
    const got = await s.person.feed(s.channelId, { since: cursor, wait: 0.2 })
    expect(got).toEqual({ messages: [], cursor, has_more: false })
  })
})

describe('wait must be a non-negative number', () => {
  const bad = ['-1', 'abc', '1s', 'NaN', 'Infinity', '1e999', '0x10', '+1', ' 1', '']
  test('on GET /v1/messages, GET /v1/asks/:id and the person feed: 400 naming wait', async () => {
    const message = await question(s, [text])
    const paths = [
      (w: string) => s.agent.call('GET', '/v1/messages', { query: { wait: w } }),
      (w: string) => s.agent.call('GET', `/v1/asks/${message.id}`, { query: { wait: w } }),
      (w: string) =>
        s.person.call('GET', `/v1/app/channels/${s.channelId}/messages`, { query: { wait: w } }),
    ]
    for (const call of paths) {
      for (const w of bad.filter((b) => b !== '')) {
        const e = await failsWith(call(w), 400)
        expect(e.field).toBe('wait')
      }
      // An empty wait means no wait.
      await call('')
    }
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('fractional and zero waits are accepted', async () => {
    const message = await question(s, [text])
    expect((await s.agent.feed({ wait: 0 })).messages).toHaveLength(1)
    expect((await s.agent.ask(message.id, 0.05)).answer).toBeNull()
    expect((await s.agent.feed({ since: await cursorNow(s), wait: 0.05 })).messages).toEqual([])
    // Exponent notation is a number too.
    const since = await cursorNow(s)
    expect(await s.agent.call('GET', '/v1/messages', { query: { since, wait: '1e-3' } })).toEqual({
      messages: [],
      cursor: since,
      has_more: false,
    })
  })
})
