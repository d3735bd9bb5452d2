import { expect, test } from 'bun:test'
import { pgMessageStore } from '../../src/messages/pg-store.ts'
import { messageStore } from '../../src/messages/store.ts'
import { channel, describeStore, people, T, within } from './engines.ts'
import { msg, send } from './message-rows.ts'

/** The message store's questions, pins, and its writers racing (one person, many instances). */

const ask = (id: string, channelId: string, expiresAt: number | null, createdAt = T) =>
  msg(id, channelId, { ask_status: 'open', ask_expires_at: expiresAt, created_at: createdAt })
const ids = (rows: { id: string }[]) => rows.map((r) => r.id)

const settled = { answer: '{}', answeredAt: T, reason: null, proof: null }

describeStore(
  'messages store (asks, pins)',
  { sqlite: messageStore, postgres: pgMessageStore },
  (engine) => {
    test('openAsks, countOpenAsks and openAsksOfUser: open questions only, oldest first', async () => {
      const e = engine()
      await people(e, 'ann', 'bob')
      await channel(e, 'a1', 'ann')
      await channel(e, 'a2', 'ann')
      await channel(e, 'b', 'bob')
      expect(await e.read((s) => s.openAsks('a1'))).toEqual([])
      expect(await e.read((s) => s.countOpenAsks('a1'))).toBe(0)
      expect(await e.read((s) => s.openAsksOfUser('ann', 10))).toEqual([])
      await send(e, ask('late', 'a1', null, T + 50))
      await send(e, ask('early', 'a2', null, T + 10))
      await send(e, ask('tie', 'a1', null, T + 10)) // same time as 'early', later rid
      const done = await send(e, ask('done', 'a1', null, T))
      await send(e, msg('plain', 'a1'))
      await send(e, ask('bobs', 'b', null, T))
      await e.write((s) => s.setAsk(done.rid, { status: 'answered', ...settled }, T + 1))
      expect(ids(await e.read((s) => s.openAsks('a1')))).toEqual(['late', 'tie'])
      expect(await e.read((s) => s.countOpenAsks('a1'))).toBe(2)
      expect(ids(await e.read((s) => s.openAsksOfUser('ann', 10)))).toEqual([
        'early',
        'tie',
        'late',
      ])
      expect(ids(await e.read((s) => s.openAsksOfUser('ann', 2)))).toEqual(['early', 'tie'])
      expect(ids(await e.read((s) => s.openAsksOfUser('bob', 10)))).toEqual(['bobs'])
    })

    test('firstExpiry and expiredBy: open questions with a time, soonest first, 500 at most', async () => {
      const e = engine()
      await people(e, 'ann')
      await channel(e, 'c', 'ann')
      expect(await e.read((s) => s.firstExpiry())).toBeUndefined()
      expect(await e.read((s) => s.expiredBy(T * 2))).toEqual([])
      await send(e, ask('never', 'c', null))
      expect(await e.read((s) => s.firstExpiry())).toBeUndefined()
      await send(e, ask('later', 'c', T + 2000))
      await send(e, ask('soon', 'c', T + 1000))
      const closed = await send(e, ask('closed', 'c', T + 500))
      await e.write((s) => s.setAsk(closed.rid, { status: 'expired', ...settled }, T + 500))
      expect(await e.read((s) => s.firstExpiry())).toBe(T + 1000)
      expect(await e.read((s) => s.expiredBy(T + 999))).toEqual([])
      expect(ids(await e.read((s) => s.expiredBy(T + 1000)))).toEqual(['soon'])
      expect(ids(await e.read((s) => s.expiredBy(T + 5000)))).toEqual(['soon', 'later'])
      await e.insert(
        'messages',
        Array.from({ length: 505 }, (_, i) => ({
          id: `bulk${i}`,
          channel_id: 'c',
          seq: 100 + i,
          sender: 'agent',
          body: '{}',
          ask_status: 'open',
          ask_expires_at: T - 1000 + i,
          created_at: T,
          updated_at: T,
        })),
      )
      const due = await e.read((s) => s.expiredBy(T + 5000))
      expect(due).toHaveLength(500)
      expect(due[0]).toMatchObject({ id: 'bulk0', ask_expires_at: T - 1000 })
    }, 60_000)

    test('pin, pins in key order (by bytes), countPins; a deleted pin is no pin', async () => {
      const e = engine()
      await people(e, 'ann')
      await channel(e, 'c', 'ann')
      await channel(e, 'other', 'ann')
      expect(await e.read((s) => s.pins('c'))).toEqual([])
      expect(await e.read((s) => s.countPins('c'))).toBe(0)
      expect(await e.read((s) => s.pin('c', 'build'))).toBeUndefined()
      for (const key of ['build', 'Zeta', 'a.b:c-d_e', '10']) {
        await send(e, msg(`p-${key}`, 'c', { pin_key: key }))
      }
      await send(e, msg('p-other', 'other', { pin_key: 'build' }))
      await send(e, msg('unpinned', 'c'))
      expect((await e.read((s) => s.pins('c'))).map((r) => r.pin_key)).toEqual([
        '10',
        'Zeta',
        'a.b:c-d_e',
        'build',
      ])
      expect(await e.read((s) => s.countPins('c'))).toBe(4)
      const build = await e.read((s) => s.pin('c', 'build'))
      expect(build).toMatchObject({ id: 'p-build', pin_key: 'build' })
      expect(await e.read((s) => s.pin('c', 'BUILD'))).toBeUndefined() // keys are exact
      // The key is unique in its channel.
      await expect(send(e, msg('dup', 'c', { pin_key: 'build' }))).rejects.toThrow()
      await e.write((s) => s.markDeleted(build?.rid ?? 0, T + 1))
      expect(await e.read((s) => s.pin('c', 'build'))).toBeUndefined()
      expect(await e.read((s) => s.countPins('c'))).toBe(3)
      expect((await send(e, msg('again', 'c', { pin_key: 'build' }))).pin_key).toBe('build')
    })

    test('pins put at once: a key is created once, and the limit holds', async () => {
      const e = engine()
      await people(e, 'ann')
      await channel(e, 'c', 'ann')
      // What putPin does in its write: find the key, replace its body or (under the limit)
      // create it. The pause widens the window another instance would slip through.
      const put = (key: string, text: string, max = 2) =>
        e.write(async (s) => {
          const existing = await s.pin('c', key)
          const count = await s.countPins('c')
          await Bun.sleep(30)
          if (existing) return await s.setBody(existing.rid, `{"text":"${text}"}`, T + 1)
          if (count >= max) return undefined
          return await s.insert(msg(`pin-${key}-${text}`, 'c', { pin_key: key }))
        })
      const same = await Promise.all(['1', '2', '3', '4'].map((n) => put('build', n)))
      expect(same.every((r) => r?.pin_key === 'build')).toBe(true)
      expect(await e.read((s) => s.countPins('c'))).toBe(1)
      const more = await Promise.all(['x', 'y', 'z'].map((key) => put(key, key)))
      expect(more.filter((r) => r !== undefined)).toHaveLength(1)
      expect(await e.read((s) => s.countPins('c'))).toBe(2)
    })

    test('forChange waits for a change of the person not yet committed, then finds it', async () => {
      const e = engine()
      await people(e, 'ann')
      await channel(e, 'a', 'ann')
      const m = await send(e, msg('m', 'a'))
      expect(await e.read((s) => s.forChange('nope'))).toBeUndefined()
      let commit: () => void = () => {}
      const held = new Promise<void>((r) => {
        commit = r
      })
      let started: () => void = () => {}
      const deleted = new Promise<void>((r) => {
        started = r
      })
      // Another instance deletes the message and has not committed yet.
      const deleting = e.write(async (s) => {
        await s.markDeleted(m.rid, T + 1)
        started()
        await held
      })
      await deleted
      // An edit's unit looks at the row it is about to change: it must wait, then see the
      // delete (a plain read would find the body still there, and the edit would restore it).
      const looking = e.write((s) => s.forChange('m'))
      expect(await within(looking, 300)).toBe('pending')
      commit()
      await deleting
      const found = await looking
      expect(found?.deleted_at).toBe(T + 1)
      expect(found?.body).toBeNull()
    })

    test('a question is settled once: an answer and an expiry racing, one wins', async () => {
      const e = engine()
      await people(e, 'ann')
      await channel(e, 'a', 'ann')
      const q = await send(e, ask('q', 'a', T + 1))
      const attempt = (status: 'answered' | 'expired') =>
        e.write(async (s) => {
          const row = await s.setAsk(q.rid, { ...settled, status }, T + 2)
          await Bun.sleep(20) // the first holds the row while the other tries
          if (!row) throw new Error('already settled')
          return row.ask_status
        })
      const results = await Promise.allSettled([attempt('answered'), attempt('expired')])
      const won = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
      expect(won).toHaveLength(1)
      expect(String((await e.read((s) => s.byId('q')))?.ask_status)).toBe(String(won[0]))
      expect((await e.read((s) => s.byId('q')))?.seq).toBe(2) // the loser's number given back
    })

    test("a reader's cursor never passes a change that commits later (one person, two channels)", async () => {
      const e = engine()
      await people(e, 'ann')
      await channel(e, 'a', 'ann')
      await channel(e, 'b', 'ann')
      let commit: () => void = () => {}
      const held = new Promise<void>((r) => {
        commit = r
      })
      let numbered: () => void = () => {}
      const hasRow = new Promise<void>((r) => {
        numbered = r
      })
      // The first writer numbers its message and stays open; a second writer of the same person
      // (another instance, on Postgres) must not commit a change numbered after it meanwhile.
      const first = e.write(async (s) => {
        const row = await s.insert(msg('first', 'a'))
        numbered()
        await held
        return row
      })
      await hasRow
      const second = e.write((s) => s.insert(msg('second', 'b')))
      expect(await within(second, 300)).toBe('pending')
      const seen = await e.read((s) => s.personFeed('ann', 0, 10))
      const cursor = seen.at(-1)?.seq ?? 0
      commit()
      const [one, two] = await Promise.all([first, second])
      const after = await e.read((s) => s.personFeed('ann', cursor, 10))
      expect([...ids(seen), ...ids(after)]).toEqual(['first', 'second'])
      expect([one.seq, two.seq]).toEqual([1, 2])
      // rid too is drawn in commit order within the person (read marks compare rids).
      expect(two.rid).toBeGreaterThan(one.rid)
    })

    test('a writer that rolls back leaves no gap: the one waiting takes its number', async () => {
      const e = engine()
      await people(e, 'ann')
      await channel(e, 'a', 'ann')
      let abort: () => void = () => {}
      const held = new Promise<void>((r) => {
        abort = r
      })
      const first = e.write(async (s) => {
        await s.insert(msg('doomed', 'a'))
        await held
        throw new Error('rolled back on purpose')
      })
      await Bun.sleep(50)
      const second = e.write((s) => s.insert(msg('kept', 'a')))
      abort()
      await expect(first).rejects.toThrow('on purpose')
      expect((await second).seq).toBe(1)
      expect(ids(await e.read((s) => s.feed('a', 0, 10)))).toEqual(['kept'])
    })

    test("two people's writers never wait for each other (Postgres: their own rows)", async () => {
      const e = engine()
      // SQLite has one writer at a time by design (the write path queues every unit).
      if (e.name === 'sqlite') return
      await people(e, 'ann', 'bob')
      await channel(e, 'a', 'ann')
      await channel(e, 'b', 'bob')
      let commit: () => void = () => {}
      const held = new Promise<void>((r) => {
        commit = r
      })
      const first = e.write(async (s) => {
        await s.insert(msg('anns', 'a'))
        await held
      })
      await Bun.sleep(50)
      const bobs = await within(
        e.write((s) => s.insert(msg('bobs', 'b'))),
        5000,
      )
      expect(bobs).toMatchObject({ id: 'bobs', seq: 1 })
      commit()
      await first
    })
  },
)
