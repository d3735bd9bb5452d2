import { expect, test } from 'bun:test'
import { joinLinkStore } from '../../src/people/enrol/join-store.ts'
import {
  pgJoinLinkStore,
  pgPairingStore,
  pgSignInLinkStore,
} from '../../src/people/enrol/pg-store.ts'
import { signInLinkStore } from '../../src/people/enrol/sign-in-store.ts'
import { pairingStore } from '../../src/people/enrol/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

const hash = (n: number) => new Uint8Array(32).fill(n)

async function owner(e: StoreEngine<unknown>) {
  await e.insert('users', { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1 })
  await e.insert('channels', { id: 'c1', user_id: 'u1', label: 'C', created_at: 1, updated_at: 1 })
}

const pairing = (id: string, n: number, expires = 1_764_000_600_000) => ({
  id,
  device_hash: hash(n),
  user_code: `CODE-${n}`,
  label: n % 2 ? null : 'laptop — ünïcode',
  host: n % 2 ? null : `host-${n}.local`,
  address: n % 2 ? null : n === 2 ? '2001:db8::2' : `192.0.2.${n}`,
  created_at: 1_764_000_000_000 + n,
  expires_at: expires,
})

describeStore('pairings store', { sqlite: pairingStore, postgres: pgPairingStore }, (engine) => {
  test('a pairing is pending, found by device and by user code', async () => {
    const e = engine()
    const made = await e.write((s) => s.insert(pairing('p1', 2)))
    expect(made).toEqual({
      ...pairing('p1', 2),
      status: 'pending',
      user_id: null,
      channel_id: null,
    })
    expect(await e.read((s) => s.byDevice(hash(2)))).toEqual(made)
    expect(await e.read((s) => s.byUserCode('CODE-2'))).toEqual(made)
    expect(await e.read((s) => s.byUserCode('CODE-3'))).toBeUndefined()
  })

  test('settled once (racing approvals: one wins), redeemed once, only when approved', async () => {
    const e = engine()
    await owner(e as StoreEngine<unknown>)
    await e.write(async (s) => {
      await s.insert(pairing('p1', 1))
      await s.insert(pairing('p2', 2))
    })
    expect(await e.write((s) => s.redeem('p1'))).toBeUndefined() // pending: not yet
    const racing = await Promise.all([
      e.write((s) => s.settle('p1', 'approved', 'u1', 'c1')),
      e.write((s) => s.settle('p1', 'denied', null, null)),
    ])
    expect(racing.filter((r) => r !== undefined)).toHaveLength(1)
    const status = (await e.read((s) => s.byDevice(hash(1))))?.status
    if (status === 'approved') {
      expect(await e.write((s) => s.redeem('p1'))).toMatchObject({
        status: 'redeemed',
        user_id: 'u1',
        channel_id: 'c1',
      })
      expect(await e.write((s) => s.redeem('p1'))).toBeUndefined()
    } else {
      expect(status).toBe('denied')
      expect(await e.write((s) => s.redeem('p1'))).toBeUndefined()
    }
    await e.write((s) => s.settle('p2', 'denied', null, null))
    expect(await e.write((s) => s.redeem('p2'))).toBeUndefined()
  })

  test('pending lists the pairings still waiting at a time, oldest first, with their origin', async () => {
    const e = engine()
    await owner(e as StoreEngine<unknown>)
    await e.write(async (s) => {
      await s.insert(pairing('late', 4))
      await s.insert(pairing('first', 2))
      await s.insert(pairing('expired', 3, 500))
      await s.insert(pairing('answered', 6))
    })
    await e.write((s) => s.settle('answered', 'denied', null, null))
    const pending = await e.read((s) => s.pending(1_000))
    expect(pending.map((p) => p.id)).toEqual(['first', 'late'])
    expect(pending[0]).toMatchObject({ host: 'host-2.local', address: '2001:db8::2' })
    expect(await e.read((s) => s.pending(1_764_000_600_000))).toEqual([])
  })

  test('removeExpired removes pairings expired at or before the time given', async () => {
    const e = engine()
    await e.write(async (s) => {
      await s.insert(pairing('a', 1, 100))
      await s.insert(pairing('b', 2, 101))
    })
    await e.write((s) => s.removeExpired(100))
    expect(await e.read((s) => s.byDevice(hash(1)))).toBeUndefined()
    expect(await e.read((s) => s.byDevice(hash(2)))).toMatchObject({ id: 'b' })
  })
})

describeStore(
  'join links store',
  { sqlite: joinLinkStore, postgres: pgJoinLinkStore },
  (engine) => {
    test('a link is made, found by hash, and used once even by racing joins', async () => {
      const e = engine()
      await owner(e as StoreEngine<unknown>)
      const link = {
        id: 'j1',
        hash: hash(9),
        user_id: 'u1',
        channel_id: 'c1',
        label: 'CI — ünïcode',
        created_at: 1_764_000_000_000,
        expires_at: 1_764_000_900_000,
      }
      expect(await e.write((s) => s.insert(link))).toEqual({ ...link, used_at: null })
      expect(await e.read((s) => s.byHash(hash(9)))).toEqual({ ...link, used_at: null })
      expect(await e.read((s) => s.byHash(hash(8)))).toBeUndefined()
      const uses = await Promise.all(
        [1, 2, 3].map((n) => e.write((s) => s.use('j1', 1_764_000_000_000 + n))),
      )
      expect(uses.filter(Boolean)).toHaveLength(1)
      expect((await e.read((s) => s.byHash(hash(9))))?.used_at).toBe(
        1_764_000_000_000 + uses.indexOf(true) + 1,
      )
    })
  },
)

describeStore(
  'sign-in links store',
  { sqlite: signInLinkStore, postgres: pgSignInLinkStore },
  (engine) => {
    const link = (id: string, n: number, expires = 2000) => ({
      id,
      hash: hash(n),
      user_id: 'u1',
      created_at: 1000,
      expires_at: expires,
    })

    test('found by hash and id; used once, never at or after its expiry', async () => {
      const e = engine()
      await owner(e as StoreEngine<unknown>)
      await e.write(async (s) => {
        await s.insert(link('a', 1))
        await s.insert(link('b', 2))
      })
      expect(await e.read((s) => s.byHash(hash(1)))).toEqual({ ...link('a', 1), used_at: null })
      expect(await e.read((s) => s.byId('b'))).toEqual({ ...link('b', 2), used_at: null })
      expect(await e.write((s) => s.use('b', 2000))).toBe(false) // expired at 2000
      expect(await e.write((s) => s.use('a', 1999))).toBe(true)
      expect(await e.write((s) => s.use('a', 1999))).toBe(false)
      expect((await e.read((s) => s.byId('a')))?.used_at).toBe(1999)
    })

    test('removeForUser removes every link of the person, used or not, and counts them', async () => {
      const e = engine()
      await owner(e as StoreEngine<unknown>)
      await e.write(async (s) => {
        await s.insert(link('a', 1))
        await s.insert(link('b', 2))
        await s.use('a', 1500)
      })
      expect(await e.write((s) => s.removeForUser('u1'))).toBe(2)
      expect(await e.write((s) => s.removeForUser('u1'))).toBe(0)
      expect(await e.read((s) => s.byId('a'))).toBeUndefined()
    })
  },
)
