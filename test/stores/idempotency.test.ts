import { expect, test } from 'bun:test'
import { pgIdempotencyStore } from '../../src/access/idempotency/pg-store.ts'
import { idempotencyStore } from '../../src/access/idempotency/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

type E = StoreEngine<ReturnType<typeof idempotencyStore>>

const channel = async (e: E) => {
  await e.insert('users', { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1 })
  await e.insert('channels', { id: 'c1', user_id: 'u1', label: 'C', created_at: 1, updated_at: 1 })
}
const answer = (key: string, at: number, hash = 'h1') => ({
  channel_id: 'c1',
  key,
  request_hash: hash,
  status: 201,
  response: '{"message":{"id":"m1","body":{"text":"ünïcode"}}}',
  created_at: at,
})

describeStore(
  'idempotency store',
  { sqlite: idempotencyStore, postgres: pgIdempotencyStore },
  (engine) => {
    test('claim stores an answer once; find sees it while live, not once it is past the cutoff', async () => {
      const e = engine()
      await channel(e)
      expect(await e.write((s) => s.claim(answer('k1', 1000), 0))).toBe(true)
      expect(await e.read((s) => s.find('c1', 'k1', 999))).toEqual(answer('k1', 1000))
      expect(await e.read((s) => s.find('c1', 'k1', 1000))).toBeUndefined()
      expect(await e.read((s) => s.find('c1', 'other', 0))).toBeUndefined()
    })

    test('a live key is kept by its first answer; an expired one is replaced', async () => {
      const e = engine()
      await channel(e)
      await e.write((s) => s.claim(answer('k1', 1000), 0))
      expect(await e.write((s) => s.claim(answer('k1', 2000, 'h2'), 999))).toBe(false)
      expect((await e.read((s) => s.find('c1', 'k1', 0)))?.request_hash).toBe('h1')
      expect(await e.write((s) => s.claim(answer('k1', 3000, 'h3'), 1000))).toBe(true)
      expect(await e.read((s) => s.find('c1', 'k1', 0))).toEqual(answer('k1', 3000, 'h3'))
    })

    test('claims racing for one key: exactly one keeps it', async () => {
      const e = engine()
      await channel(e)
      const results = await Promise.all(
        ['a', 'b', 'c', 'd'].map((h) => e.write((s) => s.claim(answer('k', 5000, h), 0))),
      )
      expect(results.filter(Boolean)).toHaveLength(1)
      const kept = await e.read((s) => s.find('c1', 'k', 0))
      expect(['a', 'b', 'c', 'd'][results.indexOf(true)]).toBe(kept?.request_hash)
    })

    test('sweep removes keys created at or before the cutoff and counts them', async () => {
      const e = engine()
      await channel(e)
      await e.write(async (s) => {
        await s.claim(answer('a', 10), 0)
        await s.claim(answer('b', 20), 0)
        await s.claim(answer('c', 30), 0)
      })
      expect(await e.write((s) => s.sweep(20))).toBe(2)
      expect(await e.write((s) => s.sweep(20))).toBe(0)
      expect(await e.read((s) => s.find('c1', 'c', 0))).toMatchObject({ key: 'c' })
    })
  },
)
