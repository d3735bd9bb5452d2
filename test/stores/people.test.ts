import { expect, test } from 'bun:test'
import { pgInviteStore, pgUserStore } from '../../src/people/pg-store.ts'
import { inviteStore, userStore } from '../../src/people/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

/** The latest a JS Date can say, in ms: far past 2^31, still below 2^53. */
const FAR = 8_640_000_000_000_000

const newUser = (
  id: string,
  more: Partial<{ email: string; owner: boolean; at: number }> = {},
) => ({
  id,
  email: more.email ?? `${id}@example.com`,
  name: null,
  is_owner: more.owner ?? false,
  created_at: more.at ?? 1_764_000_000_000,
  email_verified: false,
})

describeStore('users store', { sqlite: userStore, postgres: pgUserStore }, (engine) => {
  test('insert answers the whole row; byId and byEmail find it; unknown ones are undefined', async () => {
    const e = engine()
    const made = await e.write((s) =>
      s.insert({ ...newUser('u1', { at: FAR }), name: 'Ann Example', email_verified: true }),
    )
    // `SELECT *` answers migration 006's change counter too, a number on both engines.
    expect(made as unknown).toEqual({
      id: 'u1',
      email: 'u1@example.com',
      name: 'Ann Example',
      is_owner: 0,
      created_at: FAR,
      email_verified: 1,
      change_seq: 0,
    })
    expect(await e.read((s) => s.byId('u1'))).toEqual(made)
    expect(await e.read((s) => s.byEmail('u1@example.com'))).toEqual(made)
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
    expect(await e.read((s) => s.byEmail('nope@example.com'))).toBeUndefined()
    const nameless = await e.write((s) => s.insert(newUser('u2', { owner: true })))
    expect(nameless).toMatchObject({ name: null, is_owner: 1, email_verified: 0 })
  })

  test('email: found whatever its case, kept as written, and unique whatever its case', async () => {
    const e = engine()
    await e.write((s) => s.insert(newUser('u1', { email: 'Ann.Example@Example.COM' })))
    for (const spelling of ['ann.example@example.com', 'ANN.EXAMPLE@EXAMPLE.COM']) {
      expect(await e.read((s) => s.byEmail(spelling))).toMatchObject({
        id: 'u1',
        email: 'Ann.Example@Example.COM',
      })
    }
    expect(await e.read((s) => s.byEmail('ann.example@example.co'))).toBeUndefined()
    await expect(
      e.write((s) => s.insert(newUser('u2', { email: 'ann.example@EXAMPLE.com' }))),
    ).rejects.toThrow()
    expect(await e.read((s) => s.byId('u2'))).toBeUndefined()
    expect(await e.read((s) => s.all())).toHaveLength(1)
  })

  test('markVerified sets the flag; a missing person is no error', async () => {
    const e = engine()
    await e.write((s) => s.insert(newUser('u1')))
    await e.write((s) => s.markVerified('u1'))
    await e.write((s) => s.markVerified('nope'))
    expect((await e.read((s) => s.byId('u1')))?.email_verified).toBe(1)
  })

  test('hasOwner; all in creation order, ties by id in byte order', async () => {
    const e = engine()
    expect(await e.read((s) => s.hasOwner())).toBe(false)
    expect(await e.read((s) => s.all())).toEqual([])
    await e.write(async (s) => {
      await s.insert(newUser('b', { at: 20 }))
      await s.insert(newUser('a', { at: 20 }))
      await s.insert(newUser('Z', { at: 20, email: 'upper-z@example.com' })) // 'Z' < 'a' in bytes, not in a natural collation
      await s.insert(newUser('z', { at: 10 }))
    })
    expect(await e.read((s) => s.hasOwner())).toBe(false)
    expect((await e.read((s) => s.all())).map((u) => u.id)).toEqual(['z', 'Z', 'a', 'b'])
    await e.write((s) => s.insert(newUser('o', { owner: true, at: FAR })))
    expect(await e.read((s) => s.hasOwner())).toBe(true)
    expect((await e.read((s) => s.all())).at(-1)?.id).toBe('o')
  })

  test('remove takes a person with what they own, never the owner', async () => {
    const e = engine()
    await e.write(async (s) => {
      await s.insert(newUser('o', { owner: true }))
      await s.insert(newUser('u1'))
    })
    await e.insert('channels', {
      id: 'c1',
      user_id: 'u1',
      label: 'C',
      created_at: 1,
      updated_at: 1,
    })
    expect(await e.write((s) => s.remove('o'))).toBe(false)
    expect(await e.write((s) => s.remove('u1'))).toBe(true)
    expect(await e.write((s) => s.remove('u1'))).toBe(false)
    expect(await e.write((s) => s.remove('nope'))).toBe(false)
    expect(await e.read((s) => s.byId('o'))).toBeDefined()
    expect(await e.rows('SELECT id FROM channels')).toEqual([])
  })

  test('two first setups racing: exactly one makes the owner', async () => {
    const e = engine()
    const setup = (id: string) =>
      e.write(async (s) => {
        if (await s.hasOwner()) return false
        await Bun.sleep(50) // on Postgres both would have looked before either inserts
        await s.insert(newUser(id, { owner: true }))
        return true
      })
    const made = await Promise.all(['a', 'b', 'c'].map(setup))
    expect(made.filter(Boolean)).toHaveLength(1)
    expect(await e.rows('SELECT id FROM users WHERE is_owner = 1')).toHaveLength(1)
  })
})

const hash = (n: number) => new Uint8Array(32).fill(n)
const newInvite = (id: string, n: number, expires: number, email: string | null = null) => ({
  id,
  hash: hash(n),
  created_by: 'o',
  email,
  created_at: 1_000 + n,
  expires_at: expires,
})

describeStore('invites store', { sqlite: inviteStore, postgres: pgInviteStore }, (engine) => {
  const owner = (e: Pick<StoreEngine<unknown>, 'insert'>) =>
    e.insert('users', { id: 'o', email: 'o@example.com', is_owner: 1, created_at: 1 })

  test('insert answers the whole row; byHash and byId find it, bytes and all', async () => {
    const e = engine()
    await owner(e)
    const made = await e.write((s) => s.insert(newInvite('i1', 1, FAR, 'Bob@Example.com')))
    expect(made).toEqual({
      ...newInvite('i1', 1, FAR, 'Bob@Example.com'),
      used_at: null,
      used_by: null,
    })
    expect(made.hash).toBeInstanceOf(Uint8Array)
    expect(await e.read((s) => s.byHash(hash(1)))).toEqual(made)
    expect(await e.read((s) => s.byId('i1'))).toEqual(made)
    expect(await e.read((s) => s.byHash(hash(2)))).toBeUndefined()
    expect(await e.read((s) => s.byHash(new Uint8Array(0)))).toBeUndefined()
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
  })

  test('a hash is unique', async () => {
    const e = engine()
    await owner(e)
    await e.write((s) => s.insert(newInvite('i1', 1, 10)))
    await expect(e.write((s) => s.insert(newInvite('i2', 1, 10)))).rejects.toThrow()
    expect(await e.read((s) => s.byId('i2'))).toBeUndefined()
  })

  test('open: unused and unexpired (expires_at after now), newest first', async () => {
    const e = engine()
    await owner(e)
    await e.write(async (s) => {
      await s.insert(newInvite('old', 1, 5_000))
      await s.insert(newInvite('boundary', 2, 4_000)) // expires at the very ms asked about
      await s.insert(newInvite('used', 3, 9_000))
      await s.insert(newInvite('new', 4, FAR))
      await s.use('used', 2_000, 'o')
    })
    expect((await e.read((s) => s.open(3_999))).map((i) => i.id)).toEqual([
      'new',
      'boundary',
      'old',
    ])
    expect((await e.read((s) => s.open(4_000))).map((i) => i.id)).toEqual(['new', 'old'])
    expect((await e.read((s) => s.open(FAR))).map((i) => i.id)).toEqual([])
  })

  test('use marks it used once: a second use, or one of a missing invite, is false', async () => {
    const e = engine()
    await owner(e)
    await e.write((s) => s.insert(newInvite('i1', 1, 10)))
    expect(await e.write((s) => s.use('i1', FAR, 'o'))).toBe(true)
    expect(await e.write((s) => s.use('i1', 8, 'someone else'))).toBe(false)
    expect(await e.write((s) => s.use('nope', 8, 'o'))).toBe(false)
    expect(await e.read((s) => s.byId('i1'))).toMatchObject({ used_at: FAR, used_by: 'o' })
  })

  test('two uses racing: exactly one is true', async () => {
    const e = engine()
    await owner(e)
    await e.write((s) => s.insert(newInvite('i1', 1, 10)))
    const used = await Promise.all(
      ['a', 'b', 'c', 'd'].map((by) =>
        e.write(async (s) => {
          const ok = await s.use('i1', 5, by)
          await Bun.sleep(20) // the first holds its row while the others try
          return ok
        }),
      ),
    )
    expect(used.filter(Boolean)).toHaveLength(1)
  })

  test('remove: true once, false for a missing invite; the inviter removed takes them too', async () => {
    const e = engine()
    await owner(e)
    await e.write(async (s) => {
      await s.insert(newInvite('i1', 1, 10))
      await s.insert(newInvite('i2', 2, 10))
    })
    expect(await e.write((s) => s.remove('i1'))).toBe(true)
    expect(await e.write((s) => s.remove('i1'))).toBe(false)
    expect(await e.read((s) => s.byId('i1'))).toBeUndefined()
    await e.rows('DELETE FROM users WHERE id = ?', 'o')
    expect(await e.read((s) => s.byId('i2'))).toBeUndefined()
  })
})
