import { afterEach, describe, expect, test } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import { startTestServer, TestClock, type TestServer } from '../harness.ts'
import { agentCall, current, invalid, rejects, snapshot } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const setState = (id: string, json: unknown) =>
  agentCall(s, 'POST', `/v1/messages/${id}/state`, json)

const fromPerson = async (text = 'please do it') =>
  (await s.person.send(s.channelId, { text })).message

describe('POST /v1/messages/:id/state', () => {
  test('seen, working, done answer { message } with the new state', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const h = await fromPerson()
    for (const state of ['seen', 'working', 'done'] as const) {
      clock.advance(1000)
      const { message } = await s.agent.ack(h.id, state)
      expect(message.id).toBe(h.id)
      expect(message.sender).toBe('human')
      expect(message.state).toBe(state)
      expect(message.body).toEqual({ text: 'please do it' })
      expect(message.updated_at).toBe(clock.now())
      expect(message.created_at).toBe(h.created_at)
    }
  })

  test('states may be set in any order, going back too', async () => {
    s = await startTestServer()
    const h = await fromPerson()
    for (const state of ['done', 'seen', 'working', 'seen', 'done'] as const) {
      expect((await s.agent.ack(h.id, state)).message.state).toBe(state)
      expect((await current(s, h.id)).state).toBe(state)
    }
  })

  test('setting the same state again is idempotent: no new change in the feed', async () => {
    s = await startTestServer()
    const h = await fromPerson()
    const first = (await s.agent.ack(h.id, 'working')).message
    const { cursor } = await s.agent.feed({ peek: true })
    const before = snapshot(s)
    const again = (await s.agent.ack(h.id, 'working')).message
    expect(again).toEqual(first)
    expect(snapshot(s)).toEqual(before)
    expect((await s.agent.feed({ since: cursor })).messages).toEqual([])
  })

  test("each acknowledgement appears once in the person's feed", async () => {
    s = await startTestServer()
    const h = await fromPerson()
    const { cursor } = await s.person.feed(s.channelId)
    await s.agent.ack(h.id, 'working')
    await s.agent.ack(h.id, 'done')
    const next = await s.person.feed(s.channelId, { since: cursor })
    expect(next.messages).toHaveLength(1)
    expect((next.messages[0] as Message).state).toBe('done')
  })

  test('a long-polling person is woken by an acknowledgement', async () => {
    s = await startTestServer()
    const h = await fromPerson()
    const { cursor } = await s.person.feed(s.channelId)
    const waiting = s.person.feed(s.channelId, { since: cursor, wait: 10 })
    await s.agent.ack(h.id, 'working')
    const got = await waiting
    expect(got.messages.map((m) => m.id)).toEqual([h.id])
    expect((got.messages[0] as Message).state).toBe('working')
  })

  test('an invalid state → 400 naming state, nothing written', async () => {
    s = await startTestServer()
    const h = await fromPerson()
    for (const json of [{ state: 'read' }, { state: 'SEEN' }, { state: null }, { state: 1 }, {}]) {
      await invalid(s, () => setState(h.id, json), 'state')
    }
    await invalid(s, () => setState(h.id, { state: 'seen', extra: true }), 'extra')
    expect((await current(s, h.id)).state).toBeNull()
  })

  test('a body that is not JSON → 400', async () => {
    s = await startTestServer()
    const h = await fromPerson()
    await invalid(
      s,
      () =>
        s.agent.call('POST', `/v1/messages/${h.id}/state`, {
          body: 'state=seen',
          headers: { 'content-type': 'application/json' },
        }),
      null,
    )
  })

  test("the agent's own message → 400 naming state", async () => {
    s = await startTestServer()
    const m = (await s.agent.send({ body: { text: 'mine' } })).message
    await invalid(s, () => s.agent.ack(m.id, 'seen'), 'state')
    const q = (
      await s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] } })
    ).message
    await invalid(s, () => s.agent.ack(q.id, 'done'), 'state')
  })

  test('an unknown id → 404; a deleted message → 404', async () => {
    s = await startTestServer()
    await rejects(s, () => s.agent.ack('msg_nope', 'seen'), 404)
    const m = (await s.agent.send({ body: { text: 'x' } })).message
    await s.agent.remove(m.id)
    await rejects(s, () => s.agent.ack(m.id, 'seen'), 404)
  })

  test("another channel's person message → 404", async () => {
    s = await startTestServer()
    const other = await s.addChannel()
    const h = (await s.person.send(other.channelId, { text: 'for the other agent' })).message
    await rejects(s, () => s.agent.ack(h.id, 'done'), 404)
    expect((await other.agent.ack(h.id, 'done')).message.state).toBe('done')
  })

  test('no token → 401; a person token → 403', async () => {
    s = await startTestServer()
    const h = await fromPerson()
    await rejects(
      s,
      () => s.raw().call('POST', `/v1/messages/${h.id}/state`, { json: { state: 'seen' } }),
      401,
    )
    await rejects(
      s,
      () => s.person.call('POST', `/v1/messages/${h.id}/state`, { json: { state: 'seen' } }),
      403,
    )
  })
})
