import { expect, test } from 'bun:test'
import { pgChannelStore } from '../../src/channels/pg-store.ts'
import { channelStore } from '../../src/channels/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

type E = StoreEngine<ReturnType<typeof channelStore>>

const person = (e: E, id: string) =>
  e.insert('users', { id, email: `${id}@example.com`, name: null, is_owner: 0, created_at: 1 })

const messageRow = (m: {
  rid: number
  channel: string
  sender?: string
  pin?: string
  deleted?: number
}) => ({
  rid: m.rid,
  id: `m${m.rid}`,
  channel_id: m.channel,
  seq: m.rid,
  sender: m.sender ?? 'agent',
  body: '{"text":"hi"}',
  silent: 0,
  pin_key: m.pin ?? null,
  created_at: m.rid,
  updated_at: m.rid,
  deleted_at: m.deleted ?? null,
})
const message = (e: E, m: Parameters<typeof messageRow>[0]) => e.insert('messages', messageRow(m))

describeStore('channels store', { sqlite: channelStore, postgres: pgChannelStore }, (engine) => {
  test('insert makes a channel while the person has fewer than max, then answers undefined', async () => {
    const e = engine()
    await person(e, 'u1')
    const made = await e.write((s) => s.insert('c1', 'u1', 'Build bot', 1000, 2))
    expect(made).toEqual({
      id: 'c1',
      user_id: 'u1',
      label: 'Build bot',
      created_at: 1000,
      updated_at: 1000,
      read_rid: 0,
    })
    expect(await e.write((s) => s.insert('c2', 'u1', 'Second', 1001, 2))).toMatchObject({
      id: 'c2',
    })
    expect(await e.write((s) => s.insert('c3', 'u1', 'Third', 1002, 2))).toBeUndefined()
    expect((await e.read((s) => s.byUser('u1'))).map((c) => c.id)).toEqual(['c1', 'c2'])
  })

  test('two inserts racing for the last place: exactly one gets it', async () => {
    const e = engine()
    await person(e, 'u1')
    const results = await Promise.all(
      ['a', 'b', 'c', 'd'].map((id) => e.write((s) => s.insert(id, 'u1', id, 5, 1))),
    )
    expect(results.filter((r) => r !== undefined)).toHaveLength(1)
    expect(await e.read((s) => s.byUser('u1'))).toHaveLength(1)
  })

  test('byId, byUser in creation order, rename, remove', async () => {
    const e = engine()
    await person(e, 'u1')
    await person(e, 'u2')
    await e.write(async (s) => {
      await s.insert('b', 'u1', 'B', 20, 10)
      await s.insert('a', 'u1', 'A', 20, 10)
      await s.insert('z', 'u1', 'Z', 10, 10)
      await s.insert('x', 'u2', 'X', 5, 10)
    })
    expect((await e.read((s) => s.byUser('u1'))).map((c) => c.id)).toEqual(['z', 'a', 'b'])
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
    const renamed = await e.write((s) => s.rename('a', 'Renamed', 99))
    expect(renamed).toMatchObject({ id: 'a', label: 'Renamed', created_at: 20, updated_at: 99 })
    await e.write((s) => s.remove('a'))
    expect(await e.read((s) => s.byId('a'))).toBeUndefined()
    expect((await e.read((s) => s.byUser('u1'))).map((c) => c.id)).toEqual(['z', 'b'])
  })

  test('lastRid, unread and markRead count live agent messages, never pins or deleted ones', async () => {
    const e = engine()
    await person(e, 'u1')
    await e.write((s) => s.insert('c', 'u1', 'C', 1, 10))
    expect(await e.read((s) => s.lastRid('c'))).toBe(0)
    await message(e, { rid: 1, channel: 'c' })
    await message(e, { rid: 2, channel: 'c', sender: 'human' })
    await message(e, { rid: 3, channel: 'c', pin: 'build' })
    await message(e, { rid: 4, channel: 'c', deleted: 9 })
    await message(e, { rid: 5, channel: 'c' })
    expect(await e.read((s) => s.lastRid('c'))).toBe(5)
    expect(await e.read((s) => s.unread('c', 0))).toBe(2)
    await e.write((s) => s.markRead('c', 1))
    expect((await e.read((s) => s.byId('c')))?.read_rid).toBe(1)
    expect(await e.read((s) => s.unread('c', 1))).toBe(1)
    await e.write((s) => s.markRead('c', 0)) // never goes back
    expect((await e.read((s) => s.byId('c')))?.read_rid).toBe(1)
  })

  test('unread stops counting at 1000', async () => {
    const e = engine()
    await person(e, 'u1')
    await e.write((s) => s.insert('c', 'u1', 'C', 1, 10))
    await e.insert(
      'messages',
      Array.from({ length: 1005 }, (_, i) => messageRow({ rid: i + 1, channel: 'c' })),
    )
    expect(await e.read((s) => s.unread('c', 0))).toBe(1000)
  }, 60_000)
})
