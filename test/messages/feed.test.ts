import { afterEach, describe, expect, test } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import { sleep, startTestServer, type TestServer } from '../harness.ts'
import { invalid, rejects, snapshot } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const ids = (messages: { id: string }[]) => messages.map((m) => m.id)
const feedRaw = (query: string) => s.agent.call('GET', `/v1/messages?${query}`)

describe('GET /v1/messages: cursor semantics', () => {
  test('an empty channel answers no messages and cursor 0', async () => {
    s = await startTestServer()
    expect(await s.agent.feed()).toEqual({ messages: [], cursor: 0, has_more: false })
    expect(await s.agent.feed({ since: 0 })).toEqual({ messages: [], cursor: 0, has_more: false })
  })

  test('messages come oldest first, and the cursor moves past them', async () => {
    s = await startTestServer()
    const a = (await s.agent.send({ body: { text: 'a' } })).message
    const b = (await s.agent.send({ body: { text: 'b' } })).message
    const first = await s.agent.feed({ since: 0 })
    expect(first.messages).toEqual([a, b])
    expect(first.has_more).toBe(false)
    expect(first.cursor).toBeGreaterThan(0)
    const c = (await s.agent.send({ body: { text: 'c' } })).message
    const second = await s.agent.feed({ since: first.cursor })
    expect(second.messages).toEqual([c])
    expect(second.cursor).toBeGreaterThan(first.cursor)
  })

  test('the cursor of an empty answer equals since, even past the head', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'a' } })
    const { cursor } = await s.agent.feed()
    expect(await s.agent.feed({ since: cursor })).toEqual({ messages: [], cursor, has_more: false })
    expect(await s.agent.feed({ since: cursor + 1000 })).toEqual({
      messages: [],
      cursor: cursor + 1000,
      has_more: false,
    })
  })

  test('a message changed several times appears once, in its latest form', async () => {
    s = await startTestServer()
    const a = (await s.agent.send({ body: { text: 'v1' } })).message
    const b = (await s.agent.send({ body: { text: 'other' } })).message
    await s.agent.edit(a.id, { text: 'v2' })
    await s.agent.edit(a.id, { text: 'v3' })
    const { messages } = await s.agent.feed()
    // b is older in change order now: a's last change came after it.
    expect(ids(messages)).toEqual([b.id, a.id])
    expect((messages[1] as Message).body.text).toBe('v3')
  })

  test('edits, answers, acks and cancels re-appear once after the cursor', async () => {
    s = await startTestServer()
    const note = (await s.agent.send({ body: { text: 'note' } })).message
    const q = (
      await s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] } })
    ).message
    const q2 = (
      await s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] } })
    ).message
    const mine = (await s.person.send(s.channelId, { text: 'hello agent' })).message
    const start = (await s.agent.feed()).cursor

    await s.agent.edit(note.id, { text: 'note, edited' })
    let next = await s.agent.feed({ since: start })
    expect(ids(next.messages)).toEqual([note.id])
    expect((next.messages[0] as Message).body.text).toBe('note, edited')

    await s.person.answer(q.id, true)
    next = await s.agent.feed({ since: next.cursor })
    expect(ids(next.messages)).toEqual([q.id])
    expect((next.messages[0] as Message).ask).toMatchObject({ status: 'answered', answer: true })

    await s.agent.ack(mine.id, 'working')
    next = await s.agent.feed({ since: next.cursor })
    expect(ids(next.messages)).toEqual([mine.id])
    expect((next.messages[0] as Message).state).toBe('working')

    await s.agent.cancel(q2.id)
    next = await s.agent.feed({ since: next.cursor })
    expect(ids(next.messages)).toEqual([q2.id])
    expect((next.messages[0] as Message).ask?.status).toBe('cancelled')

    expect((await s.agent.feed({ since: next.cursor })).messages).toEqual([])
  })

  test('a deleted message appears as { id, deleted: true } and nothing more', async () => {
    s = await startTestServer()
    const a = (await s.agent.send({ body: { text: 'secret', title: 't' }, silent: true })).message
    const { cursor } = await s.agent.feed()
    await s.agent.remove(a.id)
    const after = await s.agent.feed({ since: cursor })
    expect(after.messages).toEqual([{ id: a.id, deleted: true }])
    // From the start too: the tombstone replaces the message.
    expect((await s.agent.feed()).messages).toEqual([{ id: a.id, deleted: true }])
    // And the person's feed says the same.
    expect((await s.person.feed(s.channelId)).messages).toEqual([{ id: a.id, deleted: true }])
  })

  test("a channel's feed never shows another channel's messages", async () => {
    s = await startTestServer()
    const other = await s.addChannel()
    const theirs = (await other.agent.send({ body: { text: 'theirs' } })).message
    const mine = (await s.agent.send({ body: { text: 'mine' } })).message
    await other.agent.edit(theirs.id, { text: 'edited' })
    expect(ids((await s.agent.feed()).messages)).toEqual([mine.id])
    expect(ids((await other.agent.feed()).messages)).toEqual([theirs.id])
  })
})

describe('GET /v1/messages: sender filter', () => {
  test('sender=human shows only the person; sender=agent only the agent', async () => {
    s = await startTestServer()
    const a1 = (await s.agent.send({ body: { text: 'a1' } })).message
    const h1 = (await s.person.send(s.channelId, { text: 'h1' })).message
    const a2 = (await s.agent.send({ body: { text: 'a2' } })).message
    const h2 = (await s.person.send(s.channelId, { text: 'h2' })).message
    const agentOnly = await s.agent.feed({ sender: 'agent', peek: true })
    expect(ids(agentOnly.messages)).toEqual([a1.id, a2.id])
    const humanOnly = await s.agent.feed({ sender: 'human', peek: true })
    expect(ids(humanOnly.messages)).toEqual([h1.id, h2.id])
    expect((humanOnly.messages as Message[]).every((m) => m.sender === 'human')).toBe(true)
    // With the cursor of a filtered read, later messages of that sender still come.
    const h3 = (await s.person.send(s.channelId, { text: 'h3' })).message
    await s.agent.send({ body: { text: 'a3' } })
    const more = await s.agent.feed({ sender: 'human', since: humanOnly.cursor, peek: true })
    expect(ids(more.messages)).toEqual([h3.id])
  })

  test('a filtered read that finds nothing keeps the cursor', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'a1' } })
    expect(await s.agent.feed({ sender: 'human' })).toEqual({
      messages: [],
      cursor: 0,
      has_more: false,
    })
  })
})

describe('GET /v1/messages: seen marks', () => {
  test("reading as the agent marks the person's messages seen", async () => {
    s = await startTestServer()
    const h = (await s.person.send(s.channelId, { text: 'please look' })).message
    expect(h.state).toBeNull()
    const read = await s.agent.feed()
    expect(read.messages).toHaveLength(1)
    expect((read.messages[0] as Message).state).toBe('seen')
    // The person sees the mark.
    const theirs = await s.person.feed(s.channelId)
    expect((theirs.messages[0] as Message).state).toBe('seen')
  })

  test('peek=1 does not mark; a later read does', async () => {
    s = await startTestServer()
    const h = (await s.person.send(s.channelId, { text: 'hi' })).message
    const before = snapshot(s)
    const peeked = await s.agent.feed({ peek: true })
    expect((peeked.messages[0] as Message).state).toBeNull()
    expect(snapshot(s)).toEqual(before)
    expect(((await s.person.feed(s.channelId)).messages[0] as Message).state).toBeNull()
    // peek=true is the same as peek=1; peek=0 and peek=false read normally.
    await feedRaw('peek=true')
    expect(((await s.person.feed(s.channelId)).messages[0] as Message).state).toBeNull()
    const read = (await feedRaw('peek=0')) as { messages: Message[] }
    expect(read.messages[0]?.id).toBe(h.id)
    expect(read.messages[0]?.state).toBe('seen')
  })

  test("the agent's own read does not echo its seen marks back with the returned cursor", async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'a' } })
    await s.person.send(s.channelId, { text: 'h1' })
    await s.person.send(s.channelId, { text: 'h2' })
    const read = await s.agent.feed()
    expect(read.messages).toHaveLength(3)
    expect(await s.agent.feed({ since: read.cursor })).toEqual({
      messages: [],
      cursor: read.cursor,
      has_more: false,
    })
    // The person, reading from before the marks, sees both messages once, marked.
    const theirs = await s.person.feed(s.channelId)
    expect(theirs.messages).toHaveLength(3)
    expect(
      (theirs.messages as Message[]).filter((m) => m.sender === 'human').map((m) => m.state),
    ).toEqual(['seen', 'seen'])
  })

  test('a message already acknowledged is not re-marked seen', async () => {
    s = await startTestServer()
    const h = (await s.person.send(s.channelId, { text: 'do it' })).message
    await s.agent.ack(h.id, 'done')
    const before = snapshot(s)
    const read = await s.agent.feed()
    expect((read.messages[0] as Message).state).toBe('done')
    expect(snapshot(s)).toEqual(before)
  })

  test('reading with sender=agent marks nothing', async () => {
    s = await startTestServer()
    await s.person.send(s.channelId, { text: 'hi' })
    await s.agent.send({ body: { text: 'a' } })
    const before = snapshot(s)
    await s.agent.feed({ sender: 'agent' })
    expect(snapshot(s)).toEqual(before)
  })

  test('reading with sender=human marks and skips its own marks', async () => {
    s = await startTestServer()
    await s.person.send(s.channelId, { text: 'h1' })
    const read = await s.agent.feed({ sender: 'human' })
    expect((read.messages[0] as Message).state).toBe('seen')
    expect((await s.agent.feed({ since: read.cursor })).messages).toEqual([])
  })

  test("the person's own feed never marks anything seen", async () => {
    s = await startTestServer()
    await s.person.send(s.channelId, { text: 'hi' })
    const before = snapshot(s)
    await s.person.feed(s.channelId)
    expect(snapshot(s)).toEqual(before)
  })
})

describe('GET /v1/messages: limit and has_more', () => {
  test('limit pages through the feed with has_more', async () => {
    s = await startTestServer()
    const sent: string[] = []
    for (let i = 0; i < 5; i++)
      sent.push((await s.agent.send({ body: { text: `m${i}` } })).message.id)
    const p1 = await s.agent.feed({ limit: 2 })
    expect(ids(p1.messages)).toEqual(sent.slice(0, 2))
    expect(p1.has_more).toBe(true)
    const p2 = await s.agent.feed({ since: p1.cursor, limit: 2 })
    expect(ids(p2.messages)).toEqual(sent.slice(2, 4))
    expect(p2.has_more).toBe(true)
    const p3 = await s.agent.feed({ since: p2.cursor, limit: 2 })
    expect(ids(p3.messages)).toEqual(sent.slice(4))
    expect(p3.has_more).toBe(false)
    expect(await s.agent.feed({ since: p3.cursor, limit: 2 })).toEqual({
      messages: [],
      cursor: p3.cursor,
      has_more: false,
    })
  })

  test('a page that ends exactly at the head has has_more false', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'a' } })
    await s.agent.send({ body: { text: 'b' } })
    const page = await s.agent.feed({ limit: 2 })
    expect(page.messages).toHaveLength(2)
    expect(page.has_more).toBe(false)
  })

  test('a limit above 200 is treated as 200; no limit means 200', async () => {
    s = await startTestServer()
    for (let i = 0; i < 201; i++) await s.agent.send({ body: { text: `m${i}` } })
    const big = await s.agent.feed({ limit: 100000 })
    expect(big.messages).toHaveLength(200)
    expect(big.has_more).toBe(true)
    const dflt = await s.agent.feed()
    expect(dflt.messages).toHaveLength(200)
    expect(dflt.has_more).toBe(true)
    expect((await s.agent.feed({ since: big.cursor })).messages).toHaveLength(1)
  })

  test("paging while marking seen: every person's message arrives, marked", async () => {
    s = await startTestServer()
    const sent: string[] = []
    for (let i = 0; i < 3; i++) {
      sent.push((await s.person.send(s.channelId, { text: `h${i}` })).message.id)
    }
    const seen = new Map<string, string | null | undefined>()
    let since = 0
    for (let page = 0; page < 10; page++) {
      const r = await s.agent.feed({ since, limit: 2 })
      for (const m of r.messages as Message[]) seen.set(m.id, m.state)
      since = r.cursor
      if (!r.has_more && r.messages.length === 0) break
    }
    expect([...seen.keys()].sort()).toEqual([...sent].sort())
    expect([...seen.values()]).toEqual(['seen', 'seen', 'seen'])
    expect((await s.agent.feed({ since })).messages).toEqual([])
  })
})

describe('GET /v1/messages: long-poll', () => {
  test('a wait answers as soon as a message arrives', async () => {
    s = await startTestServer()
    const { cursor } = await s.agent.feed()
    const waiting = s.agent.feed({ since: cursor, wait: 10 })
    await sleep(50)
    const sent = (await s.person.send(s.channelId, { text: 'wake up' })).message
    const got = await waiting
    expect(ids(got.messages)).toEqual([sent.id])
    expect((got.messages[0] as Message).state).toBe('seen')
  })

  test('a wait that elapses answers empty with the same cursor', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'a' } })
    const { cursor } = await s.agent.feed()
    expect(await s.agent.feed({ since: cursor, wait: 0.3 })).toEqual({
      messages: [],
      cursor,
      has_more: false,
    })
  })

  test('a filtered wait ignores the other sender and answers for its own', async () => {
    s = await startTestServer()
    const waiting = s.agent.feed({ sender: 'human', wait: 10 })
    await sleep(30)
    await s.agent.send({ body: { text: 'from the agent' } })
    await sleep(30)
    const h = (await s.person.send(s.channelId, { text: 'from the person' })).message
    expect(ids((await waiting).messages)).toEqual([h.id])
  })

  test('wait with something already there answers at once', async () => {
    s = await startTestServer()
    const a = (await s.agent.send({ body: { text: 'a' } })).message
    expect(ids((await s.agent.feed({ wait: 55 })).messages)).toEqual([a.id])
  })

  test('a wait above 55 is accepted (treated as 55)', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'a' } })
    expect((await feedRaw('wait=3600')) as object).toMatchObject({ has_more: false })
  })
})

describe('GET /v1/messages: invalid parameters → 400 naming the parameter', () => {
  const cases: [string, string][] = [
    ['sender=robot', 'sender'],
    ['sender=HUMAN', 'sender'],
    ['since=-1', 'since'],
    ['since=abc', 'since'],
    ['since=1.5', 'since'],
    ['since=1e3', 'since'],
    ['wait=-1', 'wait'],
    ['wait=abc', 'wait'],
    ['wait=Infinity', 'wait'],
    ['wait=1.2.3', 'wait'],
    ['peek=yes', 'peek'],
    ['peek=2', 'peek'],
    ['limit=0', 'limit'],
    ['limit=-5', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
  ]
  for (const [query, field] of cases) {
    test(`${query} → ${field}`, async () => {
      s = await startTestServer()
      await s.person.send(s.channelId, { text: 'unseen' })
      // A rejected read marks nothing seen.
      await invalid(s, () => feedRaw(query), field)
      expect(((await s.person.feed(s.channelId)).messages[0] as Message).state).toBeNull()
    })
  }

  test('empty parameters are the defaults', async () => {
    s = await startTestServer()
    expect(await feedRaw('since=&wait=&sender=&peek=&limit=')).toEqual({
      messages: [],
      cursor: 0,
      has_more: false,
    })
  })
})

describe('GET /v1/messages: authentication', () => {
  test('no token → 401, a garbage token → 401, a person token → 403', async () => {
    s = await startTestServer()
    await rejects(s, () => s.raw().call('GET', '/v1/messages'), 401)
    await rejects(s, () => s.raw('hark_garbage').call('GET', '/v1/messages'), 401)
    await rejects(s, () => s.person.call('GET', '/v1/messages'), 403)
  })
})
