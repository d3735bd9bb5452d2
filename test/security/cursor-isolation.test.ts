import { afterEach, describe, expect, test } from 'bun:test'
import type { ChannelSummary } from '../../src/messages/channel-list/schema.ts'
import type { FeedResponse, Message } from '../../src/messages/schema.ts'
import { startTestServer, type TestServer } from '../harness.ts'

/**
 * Attack: cursors as a side channel. Every cursor used to come from one server-wide change
 * count, so Bob could watch his own cursors jump and learn when (and how much) Alice's agents
 * were writing. Each person now has their own change sequence: nothing Alice or her agents do
 * moves any cursor Bob is handed, and his move by exactly his own changes.
 */

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']

const list = (p: Person) =>
  p.call<{ channels: ChannelSummary[]; cursor: number }>('GET', '/v1/app/channels')
const personFeed = (p: Person, since: number) =>
  p.call<FeedResponse>('GET', '/v1/app/feed', { query: { since: String(since) } })
const channelFeed = (p: Person, id: string, query: Record<string, string>) =>
  p.call<FeedResponse>('GET', `/v1/app/channels/${id}/messages`, { query })

describe("another person's activity moves none of my cursors", () => {
  test("Alice's agent writes, edits, deletes, asks; Bob's list, feed and agent cursors stay put", async () => {
    s = await startTestServer()
    const alice = { person: s.person, agent: s.agent, channelId: s.channelId }
    const bobsChannel = await s.addChannel('Bob agent', 'bob@example.com')
    const bob = await s.addPerson('bob@example.com')
    // Bob has some history of his own, so his cursors are not simply 0.
    await bobsChannel.agent.send({ body: { text: 'for bob' } })
    await bob.call('POST', `/v1/app/channels/${bobsChannel.channelId}/messages`, {
      json: { body: { text: 'from bob' } },
    })

    const cursorsOfBob = async () => ({
      list: (await list(bob)).cursor,
      feed: (await personFeed(bob, 0)).cursor,
      // `peek`: reading must not itself be a change (it marks Bob's message seen otherwise).
      agent: (await bobsChannel.agent.feed({ since: 0, peek: true })).cursor,
      channel: (await channelFeed(bob, bobsChannel.channelId, { since: '0' })).cursor,
      tail: (await channelFeed(bob, bobsChannel.channelId, { tail: '5' })).cursor,
    })
    // The agent's first read marks Bob's message seen: that is Bob's change, made before.
    await bobsChannel.agent.feed({ since: 0 })
    const before = await cursorsOfBob()
    expect(new Set(Object.values(before))).toEqual(new Set([before.list]))
    expect(before.list).toBeGreaterThan(0)

    // Alice's side is busy: N messages, an edit, a delete, a question and its answer, her own
    // message acknowledged by her agent, her channel renamed and read.
    const N = 30
    const sent: Message[] = []
    for (let i = 0; i < N; i++) {
      sent.push((await alice.agent.send({ body: { text: `alice ${i}` } })).message)
    }
    await alice.agent.edit((sent[0] as Message).id, { text: 'alice 0, edited' })
    await alice.agent.remove((sent[1] as Message).id)
    const ask = (
      await alice.agent.send({
        body: { text: 'ok?', blocks: [{ type: 'toggle', id: 'go', label: 'Go ahead' }] },
      })
    ).message
    await alice.person.answer(ask.id, true)
    await alice.person.call('POST', `/v1/app/channels/${alice.channelId}/messages`, {
      json: { body: { text: 'from alice' } },
    })
    await alice.agent.feed({ since: 0 })
    await alice.agent.rename('Renamed')
    await alice.person.call('POST', `/v1/app/channels/${alice.channelId}/read`)
    const aliceCursor = (await list(alice.person)).cursor
    expect(aliceCursor).toBeGreaterThanOrEqual(N + 6)

    expect(await cursorsOfBob()).toEqual(before)
    // Read from his cursor, Bob's feed has nothing and hands the same cursor back.
    expect(await personFeed(bob, before.feed)).toEqual({
      messages: [],
      cursor: before.feed,
      has_more: false,
    })
    expect(await bobsChannel.agent.feed({ since: before.agent, peek: true })).toEqual({
      messages: [],
      cursor: before.agent,
      has_more: false,
    })

    // Bob's own change moves his cursors by exactly one, whatever Alice did meanwhile.
    const mine = (await bobsChannel.agent.send({ body: { text: 'bob again' } })).message
    const after = await cursorsOfBob()
    expect(after).toEqual({
      list: before.list + 1,
      feed: before.feed + 1,
      agent: before.agent + 1,
      channel: before.channel + 1,
      tail: before.tail + 1,
    })
    const next = await personFeed(bob, before.feed)
    expect(next.messages.map((m) => m.id)).toEqual([mine.id])
  })

  test("Bob's agent writing moves neither Alice's list cursor nor her feed's", async () => {
    s = await startTestServer()
    const bobsChannel = await s.addChannel('Bob agent', 'bob@example.com')
    const { cursor } = await list(s.person)
    for (let i = 0; i < 5; i++) await bobsChannel.agent.send({ body: { text: `bob ${i}` } })
    expect(await personFeed(s.person, cursor)).toEqual({ messages: [], cursor, has_more: false })
    expect((await list(s.person)).cursor).toBe(cursor)
  })
})
