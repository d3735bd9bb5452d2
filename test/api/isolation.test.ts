import { afterEach, describe, expect, test } from 'bun:test'
import type { AgentClient, PersonClient } from '../../src/agent/client.ts'
import { LIMITS } from '../../src/messages/limits.ts'
import type { Message } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

interface World {
  /** The owner's first channel. */
  a: AgentClient
  aId: string
  /** The owner's second channel. */
  b: AgentClient
  bId: string
  /** A channel of another person, Bob. */
  c: AgentClient
  cId: string
  owner: PersonClient
  bob: PersonClient
}

async function world(): Promise<World> {
  s = await startTestServer()
  const b = await s.addChannel('Second')
  const bob = await s.addPerson('bob@example.com')
  const c = await s.addChannel('Bob agent', 'bob@example.com')
  return {
    a: s.agent,
    aId: s.channelId,
    b: b.agent,
    bId: b.channelId,
    c: c.agent,
    cId: c.channelId,
    owner: s.person,
    bob,
  }
}

const question = (id = 'go') => ({
  body: { text: 'Go?', blocks: [{ type: 'confirm', id, label: 'Go' }] },
})

describe("agent routes on another channel's ids", () => {
  test('messages: edit, replace, delete, state, cancel and ask are 404 and change nothing', async () => {
    const w = await world()
    const { message } = await w.a.send({ body: { text: 'mine' } })
    const ask = (await w.a.send(question())).message
    const human = (await w.owner.send(w.aId, { text: 'from the person' })).message
    for (const other of [w.b, w.c]) {
      await failsWith(other.edit(message.id, { text: 'hijack' }), 404)
      await failsWith(other.replace(message.id, { text: 'hijack' }), 404)
      await failsWith(other.remove(message.id), 404)
      await failsWith(other.ack(human.id, 'done'), 404)
      await failsWith(other.cancel(ask.id), 404)
      await failsWith(other.ask(ask.id), 404)
      await failsWith(other.ask(ask.id, 0.1), 404)
    }
    const { messages } = await w.a.feed({ peek: true })
    const byId = new Map((messages as Message[]).map((m) => [m.id, m]))
    expect(byId.get(message.id)?.body.text).toBe('mine')
    expect(byId.get(ask.id)?.ask?.status).toBe('open')
    expect(byId.get(human.id)?.state).toBeNull()
  })

  test("the 404 for another channel's id reads exactly like the 404 for an unknown id", async () => {
    const w = await world()
    const { message } = await w.a.send({ body: { text: 'mine' } })
    const theirs = await failsWith(w.b.edit(message.id, { text: 'x' }), 404)
    const unknown = await failsWith(w.b.edit('msg_doesnotexist', { text: 'x' }), 404)
    expect(theirs.error).toBe(unknown.error)
    const ask = (await w.a.send(question())).message
    expect((await failsWith(w.b.ask(ask.id), 404)).error).toBe(
      (await failsWith(w.b.ask('msg_doesnotexist'), 404)).error,
    )
  })

  test('feeds and open-question lists hold only the channel’s own messages', async () => {
    const w = await world()
    await w.a.send({ body: { text: 'a1' } })
    await w.a.send(question('qa'))
    await w.owner.send(w.aId, { text: 'to a' })
    await w.c.send({ body: { text: 'c1' } })
    const own = await w.b.send({ body: { text: 'b1' } })
    const feed = await w.b.feed({ peek: true })
    expect(feed.messages.map((m) => m.id)).toEqual([own.message.id])
    expect((await w.b.asks()).asks).toEqual([])
    expect((await w.b.feed({ sender: 'human' })).messages).toEqual([])
    expect((await w.a.asks()).asks).toHaveLength(1)
    // Reading B's feed marked nothing of A's as seen.
    const aFeed = await w.a.feed({ sender: 'human', peek: true })
    expect((aFeed.messages[0] as Message).state).toBeNull()
  })

  test("a long-poll is not answered by another channel's message", async () => {
    const w = await world()
    const { cursor } = await w.b.feed({ peek: true })
    const waiting = w.b.feed({ since: cursor, wait: 0.3, peek: true })
    await w.a.send({ body: { text: 'not for b' } })
    expect(await waiting).toEqual({ messages: [], cursor, has_more: false })
  })

  test('pins are per channel: the same key in two channels is independent', async () => {
    const w = await world()
    const pa = await w.a.pin('status', { body: { text: 'A' } })
    const pb = await w.b.pin('status', { body: { text: 'B' } })
    expect(pb.pin.message.id).not.toBe(pa.pin.message.id)
    expect(pb.pin.message.channel_id).toBe(w.bId)

    await w.b.pin('status', { body: { text: 'B2' } })
    await w.b.editPin('status', { title: 'b title' })
    expect((await w.a.pins()).pins.map((p) => p.message.body)).toEqual([{ text: 'A' }])

    await w.b.unpin('status')
    expect((await w.b.pins()).pins).toEqual([])
    expect((await w.a.pins()).pins).toHaveLength(1)

    // A key only A has is 404 for B and for another person's agent.
    await w.a.pin('only-a', { body: { text: 'x' } })
    for (const other of [w.b, w.c]) {
      await failsWith(other.editPin('only-a', { text: 'hijack' }), 404)
      await failsWith(other.unpin('only-a'), 404)
    }
    // A pinned message id is not reachable through the message routes of another channel.
    await failsWith(w.b.remove(pa.pin.message.id), 404)
    expect((await w.a.pins()).pins.map((p) => p.key).sort()).toEqual(['only-a', 'status'])
  })

  test('the pin limit is counted per channel', async () => {
    const w = await world()
    for (let i = 0; i < LIMITS.pinsPerChannel; i++) await w.a.pin(`k${i}`, { body: { text: 'x' } })
    await failsWith(w.a.pin('extra', { body: { text: 'x' } }), 409)
    await w.b.pin('k0', { body: { text: 'fine' } })
    expect((await w.b.channel()).channel.pins).toBe(1)
  })

  test("files: another channel's token gets 404 and cannot reference the file", async () => {
    const w = await world()
    const file = await w.a.upload('a.png', new Uint8Array([1, 2, 3]), 'image/png')
    for (const other of [w.b, w.c]) {
      expect(typeof (await failsWith(other.download(file.file_id), 404)).error).toBe('string')
      const e = await failsWith(
        other.send({ body: { blocks: [{ type: 'image', file_id: file.file_id }] } }),
        400,
      )
      expect(e.field).toBe('body.blocks[0].file_id')
    }
    // The 404 reads like an unknown id's.
    const unknown = await w.b.raw('GET', '/v1/files/file_doesnotexist')
    const theirs = await w.b.raw('GET', `/v1/files/${file.file_id}`)
    expect(await theirs.json()).toEqual(await unknown.json())
    expect((await w.a.download(file.file_id)).status).toBe(200)
  })

  test('channel details and renames are per channel', async () => {
    const w = await world()
    await w.a.send(question())
    await w.b.rename('Renamed B')
    expect((await w.a.channel()).channel).toMatchObject({
      id: w.aId,
      label: 'Test agent',
      open_asks: 1,
    })
    expect((await w.b.channel()).channel).toMatchObject({
      id: w.bId,
      label: 'Renamed B',
      open_asks: 0,
    })
    expect((await w.c.channel()).channel.id).toBe(w.cId)
  })
})

describe('person routes', () => {
  test("each person lists only their own channels, with the agent's current label", async () => {
    const w = await world()
    await w.b.rename('Renamed B')
    const mine = (await w.owner.channels()).channels
    expect(mine.map((c) => c.id).sort()).toEqual([w.aId, w.bId].sort())
    expect(mine.find((c) => c.id === w.bId)?.label).toBe('Renamed B')
    const bobs = (await w.bob.channels()).channels
    expect(bobs.map((c) => c.id)).toEqual([w.cId])
    expect(bobs[0]?.label).toBe('Bob agent')
  })

  test('a person with no channels sees an empty list', async () => {
    const w = await world()
    const carol = await s.addPerson('carol@example.com')
    expect((await carol.channels()).channels).toEqual([])
    await failsWith(carol.feed(w.aId), 404)
  })

  test("another person's channel feed and writing to it are 404", async () => {
    const w = await world()
    await w.a.send({ body: { text: 'private' } })
    await failsWith(w.bob.feed(w.aId), 404)
    await failsWith(w.bob.send(w.aId, { text: 'intrusion' }), 404)
    await failsWith(w.owner.feed(w.cId), 404)
    await failsWith(w.owner.send(w.cId, { text: 'intrusion' }), 404)
    // Nothing was written into A by Bob.
    expect((await w.a.feed({ sender: 'human', peek: true })).messages).toEqual([])
    // The 404 reads like an unknown channel's.
    expect((await failsWith(w.bob.feed(w.aId), 404)).error).toBe(
      (await failsWith(w.bob.feed('ch_doesnotexist'), 404)).error,
    )
  })

  test("another person's question cannot be answered (404) and stays open", async () => {
    const w = await world()
    const ask = (await w.a.send(question())).message
    const bobsAsk = (await w.c.send(question())).message
    const e = await failsWith(w.bob.answer(ask.id, true), 404)
    expect(e.error).toBe((await failsWith(w.bob.answer('msg_doesnotexist', true), 404)).error)
    await failsWith(w.owner.answer(bobsAsk.id, true), 404)
    expect((await w.a.ask(ask.id)).message.ask?.status).toBe('open')
    expect((await w.c.ask(bobsAsk.id)).message.ask?.status).toBe('open')
    // Each person answers their own.
    expect((await w.owner.answer(ask.id, true)).answer).toBe(true)
    expect((await w.bob.answer(bobsAsk.id, true)).answer).toBe(true)
  })

  test('the owner sees both channels but each feed holds only its own messages', async () => {
    const w = await world()
    const ma = (await w.a.send({ body: { text: 'in a' } })).message
    const mb = (await w.b.send({ body: { text: 'in b' } })).message
    expect((await w.owner.feed(w.aId)).messages.map((m) => m.id)).toEqual([ma.id])
    expect((await w.owner.feed(w.bId)).messages.map((m) => m.id)).toEqual([mb.id])
  })

  test("an agent token of Bob's channel cannot act as a person, nor a person token as an agent", async () => {
    const w = await world()
    const { token } = await s.addChannel('Bob second', 'bob@example.com')
    const asPerson = s.personClient(token)
    await failsWith(asPerson.channels(), 403)
    await failsWith(asPerson.feed(w.aId), 403)
    expect((await w.bob.raw('GET', '/v1/channel')).status).toBe(403)
  })
})
