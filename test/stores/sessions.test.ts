import { expect, test } from 'bun:test'
import { pgSessionStore } from '../../src/access/sessions/pg-store.ts'
import { sessionStore } from '../../src/access/sessions/store.ts'
import { describeStore, type StoreEngine, UNICODE_PERSON } from './engines.ts'

type E = StoreEngine<ReturnType<typeof sessionStore>>

const people = async (e: E) => {
  await e.insert('users', { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1 })
  await e.insert('users', { id: 'u2', email: 'u2@example.com', is_owner: 0, created_at: 1 })
}
const hash = (n: number) => new Uint8Array(32).fill(n)
const session = (id: string, n: number, user = 'u1', at = 1_764_000_000_000 + n) => ({
  id,
  hash: hash(n),
  user_id: user,
  user_agent: n % 2 ? null : 'Mozilla/5.0 (iPhone) — Safari',
  created_at: at,
  expires_at: at + 30 * 86_400_000,
})

describeStore('sessions store', { sqlite: sessionStore, postgres: pgSessionStore }, (engine) => {
  test("insert answers the row, last seen at its creation; withPerson finds it with its person's row", async () => {
    const e = engine()
    await people(e)
    const made = await e.write((s) => s.insert(session('s1', 2)))
    expect(made).toEqual({ ...session('s1', 2), last_seen_at: session('s1', 2).created_at })
    expect(await e.read((s) => s.withPerson(hash(3)))).toBeUndefined()
    const person = UNICODE_PERSON
    await e.insert('users', person)
    const theirs = await e.write((s) => s.insert(session('s3', 4, 'u3')))
    expect(await e.read((s) => s.withPerson(hash(2)))).toEqual({
      session: made,
      user: {
        id: 'u1',
        email: 'u1@example.com',
        name: null,
        is_owner: 1,
        created_at: 1,
        email_verified: 0,
      },
    })
    expect(await e.read((s) => s.withPerson(hash(4)))).toEqual({ session: theirs, user: person })
  })

  test('byUser lists the most recently seen first; touch moves a session up', async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      await s.insert(session('old', 1, 'u1', 100))
      await s.insert(session('new', 2, 'u1', 200))
      await s.insert(session('theirs', 3, 'u2', 300))
    })
    expect((await e.read((s) => s.byUser('u1'))).map((x) => x.id)).toEqual(['new', 'old'])
    await e.write((s) => s.touch('old', 500, 900))
    const [first] = await e.read((s) => s.byUser('u1'))
    expect(first).toMatchObject({ id: 'old', last_seen_at: 500, expires_at: 900 })
  })

  test("remove takes only the person's own session; removeAll counts; removeExpired at the boundary", async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      await s.insert({ ...session('a', 1), expires_at: 1000 })
      await s.insert({ ...session('b', 2), expires_at: 1001 })
      await s.insert({ ...session('c', 3), expires_at: 5000 })
      await s.insert(session('d', 4, 'u2'))
    })
    expect(await e.write((s) => s.remove('d', 'u1'))).toBe(false)
    expect(await e.write((s) => s.remove('c', 'u1'))).toBe(true)
    expect(await e.write((s) => s.remove('c', 'u1'))).toBe(false)
    await e.write((s) => s.removeExpired(1000)) // expired at 1000 means gone at 1000
    expect((await e.read((s) => s.byUser('u1'))).map((x) => x.id)).toEqual(['b'])
    expect(await e.write((s) => s.removeAll('u1'))).toBe(1)
    expect(await e.write((s) => s.removeAll('u1'))).toBe(0)
    expect((await e.read((s) => s.byUser('u2'))).map((x) => x.id)).toEqual(['d'])
  })
})
