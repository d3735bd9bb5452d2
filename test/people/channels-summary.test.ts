import { afterEach, describe, expect, test } from 'bun:test'
import type { ChannelSummary } from '../../src/messages/channel-list/schema.ts'
import type { Pin } from '../../src/messages/pin-schema.ts'
import type { Message } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'
import { channelCalls } from './calls.ts'

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']

const { summary, say } = channelCalls(() => s)
const markRead = (id = s.channelId, person: Person = s.person) =>
  person.call<{ channel: ChannelSummary }>('POST', `/v1/app/channels/${id}/read`)
const pinsOf = (id = s.channelId, person: Person = s.person) =>
  person.call<{ pins: Pin[] }>('GET', `/v1/app/channels/${id}/pins`)

describe('unread counts', () => {
  test("count the agent's messages after the last read; POST /read resets them", async () => {
    s = await startTestServer()
    await say('one')
    await say('two')
    expect((await summary()).unread).toBe(2)
    const read = await markRead()
    expect(read.channel.id).toBe(s.channelId)
    expect(read.channel.unread).toBe(0)
    expect((await summary()).unread).toBe(0)
    await say('three')
    expect((await summary()).unread).toBe(1)
  })

  test("ignore the person's own messages", async () => {
    s = await startTestServer()
    await s.person.send(s.channelId, { text: 'from me' })
    expect((await summary()).unread).toBe(0)
    await say('from the agent')
    await s.person.send(s.channelId, { text: 'me again' })
    expect((await summary()).unread).toBe(1)
  })

  test('ignore deleted messages and pins', async () => {
    s = await startTestServer()
    const gone = await say('to be deleted')
    await say('kept')
    await s.agent.pin('status', { body: { text: 'building' } })
    await s.agent.pin('progress', { body: { text: '10%' } })
    expect((await summary()).unread).toBe(2)
    await s.agent.remove(gone.id)
    expect((await summary()).unread).toBe(1)
    await s.agent.editPin('status', { text: 'green' })
    expect((await summary()).unread).toBe(1)
  })

  test('reading counts to the newest message even when a pin came last', async () => {
    s = await startTestServer()
    await say('one')
    await s.agent.pin('status', { body: { text: 'x' } })
    await markRead()
    expect((await summary()).unread).toBe(0)
    await say('two')
    expect((await summary()).unread).toBe(1)
  })

  test('edits, answers and acknowledgments of read messages do not make them unread', async () => {
    s = await startTestServer()
    const m = await say('draft')
    const q = await s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'ok', label: 'Go' }] } })
    const mine = (await s.person.send(s.channelId, { text: 'task' })).message
    await markRead()
    await s.agent.edit(m.id, { text: 'final' })
    await s.person.answer(q.message.id, true)
    await s.agent.ack(mine.id, 'done')
    expect((await summary()).unread).toBe(0)
  })

  test('deleting a message after reading it does not make the count go wrong', async () => {
    s = await startTestServer()
    const a = await say('a')
    await markRead()
    await s.agent.remove(a.id)
    expect((await summary()).unread).toBe(0)
    await say('b')
    expect((await summary()).unread).toBe(1)
    // Reading a channel whose newest message was deleted never moves the mark back.
    const b = (await s.person.channels()).channels[0]?.last_message as Message
    await markRead()
    await s.agent.remove(b.id)
    await markRead()
    await say('c')
    expect((await summary()).unread).toBe(1)
  })

  test('are per channel', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Other')
    await say('here')
    await other.agent.send({ body: { text: 'there' } })
    await other.agent.send({ body: { text: 'there again' } })
    await markRead(other.channelId)
    expect((await summary()).unread).toBe(1)
    expect((await summary(other.channelId)).unread).toBe(0)
  })

  test('stop counting at 1000 (the app shows 999+)', async () => {
    s = await startTestServer()
    for (let i = 0; i < 1001; i++) await say(`m${i}`)
    expect((await summary()).unread).toBe(1000)
    expect((await markRead()).channel.unread).toBe(0)
  })

  test('reading an empty channel is fine', async () => {
    s = await startTestServer()
    const { channel } = await markRead()
    expect(channel).toMatchObject({ id: s.channelId, unread: 0, last_message: null })
  })

  test("POST /read: another person's channel or an unknown one is 404; 401; 403; origin", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const bob = await s.addPerson('bob@example.com')
    await bobs.agent.send({ body: { text: 'for bob' } })
    await failsWith(markRead(bobs.channelId), 404)
    await failsWith(markRead('ch_nope'), 404)
    expect((await summary(bobs.channelId, bob)).unread).toBe(1)
    await failsWith(s.raw().call('POST', `/v1/app/channels/${s.channelId}/read`), 401)
    await failsWith(s.agent.call('POST', `/v1/app/channels/${s.channelId}/read`), 403)
    await say('x')
    const { cookie } = await s.session()
    const foreign = await s.request('POST', `/v1/app/channels/${s.channelId}/read`, {
      cookie,
      origin: null,
    })
    expect(foreign.status).toBe(403)
    expect((await summary()).unread).toBe(1)
    const ok = await s.request('POST', `/v1/app/channels/${s.channelId}/read`, { cookie })
    expect(ok.body.channel.unread).toBe(0)
  })
})

describe('last_message', () => {
  test('is the newest live, unpinned message, from either side, in its latest form', async () => {
    s = await startTestServer()
    expect((await summary()).last_message).toBeNull()
    const a = await say('first')
    expect((await summary()).last_message).toEqual(a)
    const mine = (await s.person.send(s.channelId, { text: 'reply' })).message
    expect((await summary()).last_message).toEqual(mine)
    await s.agent.pin('status', { body: { text: 'pinned, not last' } })
    expect((await summary()).last_message?.id).toBe(mine.id)
    const acked = (await s.agent.ack(mine.id, 'working')).message
    expect((await summary()).last_message).toEqual(acked)
  })

  test('steps back when the newest is deleted, and is null when none is left', async () => {
    s = await startTestServer()
    const a = await say('a')
    const b = await say('b')
    await s.agent.remove(b.id)
    expect((await summary()).last_message?.id).toBe(a.id)
    await s.agent.remove(a.id)
    expect((await summary()).last_message).toBeNull()
  })

  test('shows an edit of the newest message', async () => {
    s = await startTestServer()
    const a = await say('a')
    const edited = (await s.agent.edit(a.id, { text: 'a, edited' })).message
    expect((await summary()).last_message).toEqual(edited)
  })
})

describe('GET /v1/app/channels/:id/pins', () => {
  test("lists the channel's pins as the agent sees them", async () => {
    s = await startTestServer()
    expect(await pinsOf()).toEqual({ pins: [] })
    await s.agent.pin('status', { body: { text: 'green' } })
    await s.agent.pin('build', { body: { title: 'Build', text: '42%' } })
    await say('not a pin')
    const { pins } = await pinsOf()
    expect(pins).toEqual((await s.agent.pins()).pins)
    expect(pins.map((p) => p.key).sort()).toEqual(['build', 'status'])
    expect((await summary()).pins).toBe(2)
  })

  test("another person's channel or an unknown one is 404; 401; 403", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    await bobs.agent.pin('secret', { body: { text: 'bob only' } })
    await failsWith(pinsOf(bobs.channelId), 404)
    await failsWith(pinsOf('ch_nope'), 404)
    await failsWith(s.raw().call('GET', `/v1/app/channels/${s.channelId}/pins`), 401)
    await failsWith(s.agent.call('GET', `/v1/app/channels/${s.channelId}/pins`), 403)
  })
})
