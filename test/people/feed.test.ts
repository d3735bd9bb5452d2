import { afterEach, describe, expect, test } from 'bun:test'
import type { ChannelSummary } from '../../src/messages/channel-list/schema.ts'
import type { FeedResponse, Message } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'
import { settledWithin } from './util.ts'

/** The person-wide change feed (`/v1/app/feed`) and a channel's tail (`?tail=N&before=`). */

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']
type Query = Record<string, string>

const feed = (query: Query = {}, person: Person = s.person) =>
  person.call<FeedResponse>('GET', '/v1/app/feed', { query })
const tail = (query: Query, id = s.channelId, person: Person = s.person) =>
  person.call<FeedResponse>('GET', `/v1/app/channels/${id}/messages`, { query })
const list = (person: Person = s.person) =>
  person.call<{ channels: ChannelSummary[]; cursor: number }>('GET', '/v1/app/channels')
const texts = (r: FeedResponse) => r.messages.map((m) => (m as Message).body.text)

/** Resolves once `n` long-polls are parked (they park after an await or two). */
async function parked(n: number): Promise<void> {
  for (let i = 0; i < 200 && s.ctx.waiters.size < n; i++) await Bun.sleep(5)
  expect(s.ctx.waiters.size).toBe(n)
}

describe('GET /v1/app/feed', () => {
  test('carries the changes of all my channels in change order, with one cursor for them all', async () => {
    s = await startTestServer()
    const second = await s.addChannel('Second')
    await s.agent.send({ body: { text: 'one' } })
    const two = (await second.agent.send({ body: { text: 'two' } })).message
    await s.agent.send({ body: { text: 'three' } })
    const all = await feed({ since: '0' })
    expect(texts(all)).toEqual(['one', 'two', 'three'])
    expect(all.has_more).toBe(false)
    await second.agent.edit(two.id, { text: 'two, edited' })
    const next = await feed({ since: String(all.cursor) })
    expect(texts(next)).toEqual(['two, edited'])
    expect((next.messages[0] as Message).channel_id).toBe(second.channelId)
    expect(next.cursor).toBeGreaterThan(all.cursor)
  })

  test('pages with limit and has_more; deletes come as tombstones', async () => {
    s = await startTestServer()
    const sent = []
    for (const text of ['a', 'b', 'c']) sent.push((await s.agent.send({ body: { text } })).message)
    const first = await feed({ since: '0', limit: '2' })
    expect(texts(first)).toEqual(['a', 'b'])
    expect(first.has_more).toBe(true)
    const rest = await feed({ since: String(first.cursor), limit: '2' })
    expect(texts(rest)).toEqual(['c'])
    expect(rest.has_more).toBe(false)
    await s.agent.remove((sent[0] as Message).id)
    const gone = await feed({ since: String(rest.cursor) })
    expect(gone.messages).toEqual([{ id: (sent[0] as Message).id, deleted: true }])
  })

  test("never carries another person's channels", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    await bobs.agent.send({ body: { text: 'for bob' } })
    await s.agent.send({ body: { text: 'for owner' } })
    expect(texts(await feed())).toEqual(['for owner'])
    const bob = await s.addPerson('bob@example.com')
    expect(texts(await feed({}, bob))).toEqual(['for bob'])
  })

  test('the channel list carries the cursor to start from: only later changes come', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'old' } })
    const { cursor } = await list()
    expect(texts(await feed({ since: String(cursor) }))).toEqual([])
    await s.agent.send({ body: { text: 'new' } })
    expect(texts(await feed({ since: String(cursor) }))).toEqual(['new'])
  })

  test('a held poll wakes on a message in any of my channels, not on another person’s', async () => {
    s = await startTestServer()
    const second = await s.addChannel('Second')
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const { cursor } = await list()
    const held = feed({ since: String(cursor), wait: '10' })
    await parked(1)
    await bobs.agent.send({ body: { text: 'for bob' } })
    expect(await settledWithin(held, 50)).toBe('pending')
    await second.agent.send({ body: { text: 'hello' } })
    const woken = await settledWithin(held, 1000)
    expect(woken === 'pending' ? woken : texts(woken)).toEqual(['hello'])
  })

  test('a channel renamed or read answers the feed once, with no messages, even between polls', async () => {
    s = await startTestServer()
    const { cursor } = await list()
    const held = feed({ since: String(cursor), wait: '10' })
    await parked(1)
    await s.agent.rename('Renamed by the agent')
    const renamed = await settledWithin(held, 1000)
    expect(renamed).toMatchObject({ messages: [], has_more: false })
    const after = (renamed as FeedResponse).cursor
    expect(after).toBeGreaterThan(cursor)
    // Answered once: polling on from the new cursor waits again.
    const again = feed({ since: String(after), wait: '10' })
    await parked(1)
    // A change between two polls is not lost: the next poll answers it at once.
    await s.person.call('POST', `/v1/app/channels/${s.channelId}/read`)
    expect(await settledWithin(again, 1000)).toMatchObject({ messages: [], has_more: false })
    await s.agent.rename('Renamed again')
    expect((await feed({ since: String(after), wait: '10' })).cursor).toBeGreaterThan(after)
  })

  test('a channel change is answered after a restart too; a cursor never skips one', async () => {
    s = await startTestServer()
    const { cursor } = await list()
    await s.agent.rename('Renamed while the app was away')
    await s.restart()
    const answer = await feed({ since: String(cursor), wait: '10' })
    expect(answer).toMatchObject({ messages: [], has_more: false })
    expect(answer.cursor).toBeGreaterThan(cursor)
    // Numbering continues after the restart: a later message comes after that cursor.
    await s.agent.send({ body: { text: 'after the restart' } })
    expect(texts(await feed({ since: String(answer.cursor) }))).toEqual(['after the restart'])
  })

  test('deleting a channel skips nothing: later changes come after every earlier cursor', async () => {
    s = await startTestServer()
    const second = await s.addChannel('Second')
    await second.agent.send({ body: { text: 'in the doomed channel' } })
    const { cursor } = await list()
    await s.person.call('DELETE', `/v1/app/channels/${second.channelId}`)
    const deleted = await feed({ since: String(cursor) })
    expect(deleted).toMatchObject({ messages: [], has_more: false })
    expect(deleted.cursor).toBeGreaterThan(cursor)
    await s.agent.send({ body: { text: 'still here' } })
    for (const from of [0, cursor, deleted.cursor]) {
      expect(texts(await feed({ since: String(from) }))).toEqual(['still here'])
    }
  })

  test('a held poll answers when one of my channels is deleted', async () => {
    s = await startTestServer()
    const second = await s.addChannel('Second')
    const held = feed({ since: String((await list()).cursor), wait: '10' })
    await parked(1)
    await s.person.call('DELETE', `/v1/app/channels/${second.channelId}`)
    expect(await settledWithin(held, 1000)).not.toBe('pending')
  })

  test('bad since, wait or limit is 400 naming the field; no login is 401', async () => {
    s = await startTestServer()
    for (const [name, value] of [
      ['since', '-1'],
      ['since', 'x'],
      ['wait', 'soon'],
      ['limit', '0'],
    ] as const) {
      const e = await failsWith(feed({ [name]: value }), 400)
      expect(e.field).toBe(name)
    }
    await failsWith(s.raw().call('GET', '/v1/app/feed'), 401)
    await failsWith(s.personClient((await s.addChannel()).token).call('GET', '/v1/app/feed'), 403)
  })
})

describe('GET /v1/app/channels/:id/messages?tail=N', () => {
  async function fill(n: number): Promise<Message[]> {
    const sent = []
    for (let i = 1; i <= n; i++) {
      sent.push((await s.agent.send({ body: { text: `m${i}` } })).message)
    }
    return sent
  }

  test('answers the newest N live messages, oldest first, and pages back with before', async () => {
    s = await startTestServer()
    const sent = await fill(7)
    await s.agent.remove((sent[5] as Message).id) // m6: tombstones are not part of a window
    await s.agent.pin('status', { body: { text: 'pinned' } }) // pins come from /pins
    const last = await tail({ tail: '3' })
    expect(texts(last)).toEqual(['m4', 'm5', 'm7'])
    expect(last.has_more).toBe(true)
    const older = await tail({ tail: '3', before: (last.messages[0] as Message).id })
    expect(texts(older)).toEqual(['m1', 'm2', 'm3'])
    expect(older.has_more).toBe(false)
  })

  test('its cursor continues the change feed: nothing read is repeated, nothing later lost', async () => {
    s = await startTestServer()
    await fill(3)
    const { cursor } = await tail({ tail: '2' })
    await s.agent.send({ body: { text: 'later' } })
    // Without tail, the same route is the channel's change feed.
    expect(texts(await tail({ since: String(cursor) }))).toEqual(['later'])
  })

  test('an empty channel answers no messages; before alone reads 50', async () => {
    s = await startTestServer()
    expect(await tail({ tail: '5' })).toMatchObject({ messages: [], has_more: false })
    const sent = await fill(2)
    expect(texts(await tail({ before: (sent[1] as Message).id }))).toEqual(['m1'])
  })

  test('bad tail, a foreign before, or tail with since/wait/sender is 400 naming the field', async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const bobsMessage = (await bobs.agent.send({ body: { text: 'x' } })).message
    const bad: Query[] = [
      { tail: '0' },
      { tail: 'ten' },
      { tail: '5', since: '0' },
      { tail: '5', wait: '1' },
      { tail: '5', sender: 'agent' },
    ]
    for (const query of bad) {
      expect((await failsWith(tail(query), 400)).field).toBe('tail')
    }
    for (const before of ['msg_nope', bobsMessage.id]) {
      expect((await failsWith(tail({ tail: '5', before }), 400)).field).toBe('before')
    }
  })

  test("another person's channel is 404", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(tail({ tail: '5' }, bobs.channelId), 404)
  })
})
