import { expect, test } from 'bun:test'
import { pgTokenStore } from '../../src/access/tokens/pg-store.ts'
import { tokenStore } from '../../src/access/tokens/store.ts'
import { describeStore, type StoreEngine, UNICODE_PERSON } from './engines.ts'

type E = StoreEngine<ReturnType<typeof tokenStore>>

async function owner(e: E) {
  await e.insert('users', { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1 })
  await e.insert('users', { id: 'u2', email: 'u2@example.com', is_owner: 0, created_at: 1 })
  await e.insert('channels', { id: 'c1', user_id: 'u1', label: 'C', created_at: 1, updated_at: 1 })
}

const hash = (n: number) => new Uint8Array(32).fill(n)
const token = (
  id: string,
  n: number,
  more: Partial<{ kind: string; user: string; channel: string | null; at: number }> = {},
) => ({
  id,
  kind: (more.kind ?? 'agent') as 'agent',
  hash: hash(n),
  user_id: more.user ?? 'u1',
  channel_id: more.channel === undefined ? 'c1' : more.channel,
  label: `label ${id} — ünïcode`,
  created_at: more.at ?? 1_764_000_000_000 + n,
})

describeStore('tokens store', { sqlite: tokenStore, postgres: pgTokenStore }, (engine) => {
  test('insert answers the whole row; withOwner and byId find it, bytes and all', async () => {
    const e = engine()
    await owner(e)
    const made = await e.write((s) => s.insert(token('t1', 1)))
    expect(made).toEqual({ ...token('t1', 1), last_used_at: null, revoked_at: null })
    expect((await e.read((s) => s.withOwner(hash(1))))?.token).toEqual(made)
    expect(await e.read((s) => s.byId('t1'))).toEqual(made)
    expect(await e.read((s) => s.withOwner(hash(2)))).toBeUndefined()
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
  })

  test("withOwner answers an agent token with its person's and its channel's whole rows", async () => {
    const e = engine()
    await owner(e)
    const person = UNICODE_PERSON
    const channel = {
      id: 'c3',
      user_id: 'u3',
      label: 'Build — ✓',
      created_at: 1_764_000_000_004,
      updated_at: 1_764_000_000_005,
      read_rid: 9_007_199_254_740_991,
    }
    await e.insert('users', person)
    await e.insert('channels', channel)
    await e.write((s) => s.insert(token('t3', 3, { user: 'u3', channel: 'c3' })))
    await e.write((s) => s.touch('t3', 1_764_000_123_456))
    expect(await e.read((s) => s.withOwner(hash(3)))).toEqual({
      token: {
        ...token('t3', 3, { user: 'u3', channel: 'c3' }),
        last_used_at: 1_764_000_123_456,
        revoked_at: null,
      },
      user: person,
      channel,
    })
  })

  test('withOwner answers a person token with its person and no channel; a revoked one as it is', async () => {
    const e = engine()
    await owner(e)
    await e.write((s) => s.insert(token('p', 4, { kind: 'person', channel: null, user: 'u2' })))
    await e.write((s) => s.revoke('p', 50))
    const found = await e.read((s) => s.withOwner(hash(4)))
    expect(found?.token).toMatchObject({
      id: 'p',
      kind: 'person',
      channel_id: null,
      revoked_at: 50,
    })
    expect(found?.user).toEqual({
      id: 'u2',
      email: 'u2@example.com',
      name: null,
      is_owner: 0,
      created_at: 1,
      email_verified: 0,
    })
    expect(found?.channel).toBeUndefined()
  })

  test('a hash is unique', async () => {
    const e = engine()
    await owner(e)
    await e.write((s) => s.insert(token('t1', 1)))
    await expect(e.write((s) => s.insert(token('t2', 1)))).rejects.toThrow()
    expect(await e.read((s) => s.byId('t2'))).toBeUndefined()
  })

  test('touch records the last use; liveByUser lists unrevoked tokens in creation order', async () => {
    const e = engine()
    await owner(e)
    await e.write(async (s) => {
      await s.insert(token('b', 2, { at: 20 }))
      await s.insert(token('a', 1, { at: 20 }))
      await s.insert(token('z', 3, { at: 10 }))
      await s.insert(token('p', 4, { kind: 'person', channel: null, user: 'u2' }))
    })
    await e.write((s) => s.touch('a', 1_764_000_123_456))
    expect((await e.read((s) => s.byId('a')))?.last_used_at).toBe(1_764_000_123_456)
    expect((await e.read((s) => s.liveByUser('u1'))).map((t) => t.id)).toEqual(['z', 'a', 'b'])
    await e.write((s) => s.revoke('a', 50))
    await e.write((s) => s.revoke('a', 60)) // a second revocation keeps the first time
    expect((await e.read((s) => s.byId('a')))?.revoked_at).toBe(50)
    expect((await e.read((s) => s.liveByUser('u1'))).map((t) => t.id)).toEqual(['z', 'b'])
  })

  test("revokeChannel revokes the channel's tokens; revokePersonTokens only person tokens, counted", async () => {
    const e = engine()
    await owner(e)
    await e.write(async (s) => {
      await s.insert(token('agent', 1))
      await s.insert(token('p1', 2, { kind: 'person', channel: null }))
      await s.insert(token('p2', 3, { kind: 'person', channel: null }))
      await s.insert(token('other', 4, { kind: 'person', channel: null, user: 'u2' }))
    })
    await e.write((s) => s.revoke('p2', 5))
    expect(await e.write((s) => s.revokePersonTokens('u1', 7))).toBe(1)
    expect(await e.write((s) => s.revokePersonTokens('u1', 8))).toBe(0)
    expect((await e.read((s) => s.byId('p2')))?.revoked_at).toBe(5)
    expect((await e.read((s) => s.byId('agent')))?.revoked_at).toBeNull()
    await e.write((s) => s.revokeChannel('c1', 9))
    expect((await e.read((s) => s.byId('agent')))?.revoked_at).toBe(9)
    expect((await e.read((s) => s.liveByUser('u2'))).map((t) => t.id)).toEqual(['other'])
  })
})
