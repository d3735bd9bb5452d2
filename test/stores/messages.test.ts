import { expect, test } from 'bun:test'
import { pgMessageStore } from '../../src/messages/pg-store.ts'
import { type MessageRow, messageStore } from '../../src/messages/store.ts'
import { channel, describeStore, people, T } from './engines.ts'
import { msg, send } from './message-rows.ts'

/** The message store's writes and feeds (asks, pins and concurrency: messages-asks.test.ts). */

describeStore('messages store', { sqlite: messageStore, postgres: pgMessageStore }, (engine) => {
  test('insert stores every field, numbers it with the person, and byId finds it', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c1', 'ann')
    const body = '{"text":"Déploiement — 完了 ✅ 🚀","title":"naïve \\"quoted\\""}'
    const made = await send(
      e,
      msg('m1', 'c1', {
        body,
        silent: true,
        ask_status: 'open',
        ask_expires_at: T + 86_400_000,
        ask_request_hash: 'ab'.repeat(32),
        created_at: T + 1,
      }),
    )
    expect(made).toEqual({
      rid: made.rid,
      id: 'm1',
      channel_id: 'c1',
      seq: 1,
      sender: 'agent',
      body,
      silent: 1,
      state: null,
      pin_key: null,
      ask_status: 'open',
      ask_expires_at: T + 86_400_000,
      ask_answered_at: null,
      answer: null,
      ask_request_hash: 'ab'.repeat(32),
      ask_reason: null,
      ask_proof: null,
      created_at: T + 1,
      updated_at: T + 1,
      deleted_at: null,
    })
    expect(typeof made.rid).toBe('number')
    expect(await e.read((s) => s.byId('m1'))).toEqual(made)
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
    const quiet = await send(e, msg('m2', 'c1', { body: null, sender: 'human' }))
    expect(quiet).toMatchObject({ seq: 2, body: null, silent: 0, sender: 'human' })
    expect(quiet.rid).toBeGreaterThan(made.rid)
  })

  test("one sequence per person: their channels share it, another person's is their own", async () => {
    const e = engine()
    await people(e, 'ann', 'bob')
    await channel(e, 'a1', 'ann')
    await channel(e, 'a2', 'ann')
    await channel(e, 'b1', 'bob')
    expect(await e.read((s) => s.currentSeq('ann'))).toBe(0)
    expect((await send(e, msg('x', 'a1'))).seq).toBe(1)
    expect((await send(e, msg('y', 'a2'))).seq).toBe(2)
    expect((await send(e, msg('z', 'b1'))).seq).toBe(1)
    expect(await e.write((s) => s.nextSeq('ann'))).toBe(3) // a change to a channel
    expect((await send(e, msg('w', 'a1'))).seq).toBe(4)
    expect(await e.read((s) => s.currentSeq('ann'))).toBe(4)
    expect(await e.read((s) => s.currentSeq('bob'))).toBe(1)
    expect(await e.read((s) => s.currentSeq('nobody'))).toBe(0)
  })

  test('a change with no person to number it throws and writes nothing', async () => {
    const e = engine()
    await people(e, 'ann')
    await expect(e.write((s) => s.nextSeq('nobody'))).rejects.toThrow()
    await expect(send(e, msg('m', 'no-such-channel'))).rejects.toThrow()
    await expect(e.write((s) => s.setBody(999, '{}', T))).rejects.toThrow()
    await expect(e.write((s) => s.setState(999, 'seen', T))).rejects.toThrow()
    await expect(e.write((s) => s.markDeleted(999, T))).rejects.toThrow()
    expect(await e.rows('SELECT * FROM messages')).toEqual([])
    expect(await e.read((s) => s.currentSeq('ann'))).toBe(0)
  })

  test('the counters.change_seq high-water mark: kept on SQLite, left alone on Postgres', async () => {
    const e = engine()
    await people(e, 'ann', 'bob')
    await channel(e, 'a', 'ann')
    await channel(e, 'b', 'bob')
    for (const id of ['1', '2', '3']) await send(e, msg(id, 'a'))
    await send(e, msg('4', 'b'))
    const [mark] = await e.rows("SELECT value FROM counters WHERE name = 'change_seq'")
    const [top] = await e.rows('SELECT max(change_seq) AS top FROM users')
    expect(Number(top?.top)).toBe(3)
    // On Postgres every writer would queue on that one row: the mark is max(users.change_seq).
    expect(Number(mark?.value)).toBe(e.name === 'sqlite' ? 3 : 0)
  })

  test('feed: after a cursor, in change order, up to a limit, by sender', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    await channel(e, 'other', 'ann')
    expect(await e.read((s) => s.feed('c', 0, 10))).toEqual([])
    await send(e, msg('a1', 'c'))
    await send(e, msg('h1', 'c', { sender: 'human' }))
    await send(e, msg('elsewhere', 'other'))
    await send(e, msg('a2', 'c'))
    const ids = (rows: { id: string }[]) => rows.map((r) => r.id)
    expect(ids(await e.read((s) => s.feed('c', 0, 10)))).toEqual(['a1', 'h1', 'a2'])
    expect(ids(await e.read((s) => s.feed('c', 1, 10)))).toEqual(['h1', 'a2'])
    expect(ids(await e.read((s) => s.feed('c', 0, 2)))).toEqual(['a1', 'h1'])
    expect(ids(await e.read((s) => s.feed('c', 4, 10)))).toEqual([])
    expect(ids(await e.read((s) => s.feed('c', 0, 10, 'agent')))).toEqual(['a1', 'a2'])
    expect(ids(await e.read((s) => s.feed('c', 2, 10, 'human')))).toEqual([])
    // A change moves the message to the end of the feed, with the person's next number.
    const a1 = await e.read((s) => s.byId('a1'))
    await e.write((s) => s.setState(a1?.rid ?? 0, 'done', T + 5))
    expect(ids(await e.read((s) => s.feed('c', 0, 10)))).toEqual(['h1', 'a2', 'a1'])
    expect((await e.read((s) => s.feed('c', 4, 10)))[0]).toMatchObject({ id: 'a1', seq: 5 })
  })

  test('setBody, setState, setAsk and markDeleted change the row and renumber it', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    const m = await send(e, msg('q', 'c', { ask_status: 'open', ask_expires_at: T + 9 }))
    const edited = await e.write((s) => s.setBody(m.rid, '{"text":"édité 🙂"}', T + 1))
    expect(edited).toEqual({ ...m, body: '{"text":"édité 🙂"}', seq: 2, updated_at: T + 1 })
    const working = await e.write((s) => s.setState(m.rid, 'working', T + 2))
    expect(working).toMatchObject({ state: 'working', seq: 3, updated_at: T + 2 })
    const proof = '{"sig":"…"}'
    const answered = await e.write((s) =>
      s.setAsk(
        m.rid,
        { status: 'answered', answer: '{"go":true}', answeredAt: T + 3, reason: null, proof },
        T + 3,
      ),
    )
    expect(answered).toMatchObject({
      ask_status: 'answered',
      answer: '{"go":true}',
      ask_answered_at: T + 3,
      ask_reason: null,
      ask_proof: proof,
      ask_expires_at: T + 9,
      seq: 4,
    })
    if (!answered) throw new Error('the open question was not settled')
    // Settled once only: a second settlement (an expiry racing the answer) changes nothing,
    // and its unit, rolled back as the service does, gives its change number back.
    const late = e.write(async (s) => {
      const settled = await s.setAsk(
        m.rid,
        { status: 'cancelled', answer: null, answeredAt: null, reason: 'gone', proof: null },
        T + 4,
      )
      if (!settled) throw new Error('no longer open')
    })
    await expect(late).rejects.toThrow('no longer open')
    expect(await e.read((s) => s.byId('q'))).toEqual(answered)
    const gone = await e.write((s) => s.markDeleted(m.rid, T + 5))
    expect(gone).toEqual({
      ...answered,
      body: null,
      answer: null,
      pin_key: null,
      ask_status: null,
      ask_expires_at: null,
      deleted_at: T + 5,
      updated_at: T + 5,
      seq: 5,
    })
    expect(await e.read((s) => s.byId('q'))).toEqual(gone)
  })

  test("personFeed: every channel of the person's in change order, a page at a time", async () => {
    const e = engine()
    await people(e, 'ann', 'bob')
    for (const c of ['a1', 'a2', 'a3']) await channel(e, c, 'ann')
    await channel(e, 'b', 'bob')
    expect(await e.read((s) => s.personFeed('ann', 0, 10))).toEqual([])
    const order = ['1', '2', '3', '4', '5', '6', '7']
    for (const [i, id] of order.entries()) {
      await send(e, msg(id, `a${(i % 3) + 1}`))
      await send(e, msg(`bob${id}`, 'b'))
    }
    const ids = async (since: number, limit: number) =>
      (await e.read((s) => s.personFeed('ann', since, limit))).map((r) => [r.id, r.seq])
    expect(await ids(0, 10)).toEqual(order.map((id, i) => [id, i + 1]))
    expect(await ids(0, 3)).toEqual([
      ['1', 1],
      ['2', 2],
      ['3', 3],
    ])
    expect(await ids(5, 10)).toEqual([
      ['6', 6],
      ['7', 7],
    ])
    expect(await ids(7, 10)).toEqual([])
    expect(await e.read((s) => s.personFeed('nobody', 0, 10))).toEqual([])
  })

  test('tail: newest live, unpinned messages before a rid; lastLive the newest', async () => {
    const e = engine()
    await people(e, 'ann')
    await channel(e, 'c', 'ann')
    await channel(e, 'empty', 'ann')
    const rows: MessageRow[] = []
    for (const id of ['1', '2', '3', '4', '5']) rows.push(await send(e, msg(id, 'c')))
    await send(e, msg('pinned', 'c', { pin_key: 'status' }))
    await e.write((s) => s.markDeleted(rows[3]?.rid ?? 0, T + 1))
    const ids = async (before: number, limit: number) =>
      (await e.read((s) => s.tail('c', before, limit))).map((r) => r.id)
    expect(await ids(Number.MAX_SAFE_INTEGER, 10)).toEqual(['5', '3', '2', '1'])
    expect(await ids(Number.MAX_SAFE_INTEGER, 2)).toEqual(['5', '3'])
    expect(await ids(rows[2]?.rid ?? 0, 10)).toEqual(['2', '1'])
    expect(await ids(rows[0]?.rid ?? 0, 10)).toEqual([])
    expect((await e.read((s) => s.lastLive('c')))?.id).toBe('5')
    expect(await e.read((s) => s.lastLive('empty'))).toBeUndefined()
    await e.write((s) => s.markDeleted(rows[4]?.rid ?? 0, T + 2))
    expect((await e.read((s) => s.lastLive('c')))?.id).toBe('3')
  })
})
