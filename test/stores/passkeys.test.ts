import { expect, test } from 'bun:test'
import { pgChallengeStore, pgPasskeyStore } from '../../src/access/passkeys/pg-store.ts'
import { challengeStore, passkeyStore } from '../../src/access/passkeys/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

const people = async (e: StoreEngine<unknown>) => {
  await e.insert('users', { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1 })
  await e.insert('users', { id: 'u2', email: 'u2@example.com', is_owner: 0, created_at: 1 })
}
const passkey = (id: string, user = 'u1', at = 1_764_000_000_000, counter = 0) => ({
  id,
  user_id: user,
  public_key: new Uint8Array([165, 1, 2, 3, 38, 0, 255]),
  counter,
  transports: '["internal","hybrid"]',
  device_type: 'multiDevice',
  backed_up: 1,
  name: 'iPhone — ünïcode',
  created_at: at,
})

describeStore('passkeys store', { sqlite: passkeyStore, postgres: pgPasskeyStore }, (engine) => {
  test('insert, byId, byUser in creation order, countByUser', async () => {
    const e = engine()
    await people(e as StoreEngine<unknown>)
    const made = await e.write((s) => s.insert(passkey('k2', 'u1', 20)))
    expect(made).toEqual({ ...passkey('k2', 'u1', 20), last_used_at: null })
    await e.write(async (s) => {
      await s.insert(passkey('k1', 'u1', 20))
      await s.insert(passkey('k0', 'u1', 10))
      await s.insert(passkey('theirs', 'u2'))
    })
    expect(await e.read((s) => s.byId('k2'))).toEqual(made)
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
    expect((await e.read((s) => s.byUser('u1'))).map((k) => k.id)).toEqual(['k0', 'k1', 'k2'])
    expect(await e.read((s) => s.countByUser('u1'))).toBe(3)
    expect(await e.read((s) => s.countByUser('nobody'))).toBe(0)
  })

  test('recordUse moves the counter forward only; racing uses of one counter: one wins', async () => {
    const e = engine()
    await people(e as StoreEngine<unknown>)
    await e.write(async (s) => {
      await s.insert(passkey('counting', 'u1', 1, 5))
      await s.insert(passkey('none', 'u1', 2, 0))
    })
    expect(
      await e.write((s) => s.recordUse('counting', 5, 'singleDevice', false, 100)),
    ).toBeUndefined()
    expect(
      await e.write((s) => s.recordUse('counting', 6, 'singleDevice', false, 100)),
    ).toMatchObject({
      counter: 6,
      device_type: 'singleDevice',
      backed_up: 0,
      last_used_at: 100,
    })
    const racing = await Promise.all(
      [1, 2, 3].map((n) =>
        e.write((s) => s.recordUse('counting', 7, 'multiDevice', true, 200 + n)),
      ),
    )
    expect(racing.filter((r) => r !== undefined)).toHaveLength(1)
    // An authenticator without a counter (0, and 0 stored) is used any number of times.
    expect(await e.write((s) => s.recordUse('none', 0, 'multiDevice', true, 300))).toMatchObject({
      counter: 0,
    })
    expect(await e.write((s) => s.recordUse('none', 0, 'multiDevice', true, 301))).toMatchObject({
      last_used_at: 301,
    })
  })

  test("rename and remove touch only the person's own passkeys; removeByUser counts", async () => {
    const e = engine()
    await people(e as StoreEngine<unknown>)
    await e.write(async (s) => {
      await s.insert(passkey('a'))
      await s.insert(passkey('b'))
      await s.insert(passkey('c', 'u2'))
    })
    expect(await e.write((s) => s.rename('c', 'u1', 'mine now'))).toBeUndefined()
    expect(await e.write((s) => s.rename('a', 'u1', 'Laptop'))).toMatchObject({
      id: 'a',
      name: 'Laptop',
    })
    expect(await e.write((s) => s.remove('c', 'u1'))).toBe(false)
    expect(await e.write((s) => s.remove('a', 'u1'))).toBe(true)
    expect(await e.write((s) => s.removeByUser('u1'))).toBe(1)
    expect((await e.read((s) => s.byUser('u2'))).map((k) => k.id)).toEqual(['c'])
  })
})

describeStore(
  'challenges store',
  { sqlite: challengeStore, postgres: pgChallengeStore },
  (engine) => {
    const challenge = (
      id: string,
      purpose: 'register' | 'login' | 'add' | 'link',
      expires: number,
    ) => ({
      id,
      purpose,
      challenge: `ch-${id}`,
      data: purpose === 'register' ? '3.sealed' : null,
      expires_at: expires,
    })

    test('take answers a challenge once, even to racing ceremonies', async () => {
      const e = engine()
      await e.write((s) => s.insert(challenge('c1', 'login', 1_764_000_300_000)))
      const taken = await Promise.all([1, 2, 3].map(() => e.write((s) => s.take('c1'))))
      expect(taken.filter((t) => t !== undefined)).toEqual([
        challenge('c1', 'login', 1_764_000_300_000),
      ])
      expect(await e.write((s) => s.take('c1'))).toBeUndefined()
    })

    test('pendingAnonymous counts live sign-up and login ceremonies with the first expiry', async () => {
      const e = engine()
      expect(await e.read((s) => s.pendingAnonymous(0))).toEqual({
        count: 0,
        firstExpiry: undefined,
      })
      await e.write(async (s) => {
        await s.insert(challenge('r', 'register', 300))
        await s.insert(challenge('l', 'login', 200))
        await s.insert(challenge('old', 'login', 100))
        await s.insert(challenge('a', 'add', 50))
      })
      expect(await e.read((s) => s.pendingAnonymous(100))).toEqual({ count: 2, firstExpiry: 200 })
      await e.write((s) => s.removeExpired(200))
      expect(await e.read((s) => s.pendingAnonymous(0))).toEqual({ count: 1, firstExpiry: 300 })
    })
  },
)
