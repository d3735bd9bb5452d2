import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { KEY_PERIOD_MS, KEY_PURPOSES } from '../../src/access/keys/keyring.ts'
import { sleep, startTestServer, TestClock, type TestServer } from '../harness.ts'

/**
 * The server keys (src/access/keys/): in the database, one per purpose and period, shared by
 * every instance on it, rotated daily. Rotation runs on the test clock, never on real days.
 */
const servers: TestServer[] = []
afterEach(async () => {
  // The other instances share the first one's directory: stopped, and the first removes it.
  const [first, ...rest] = servers.splice(0)
  for (const s of rest) await s.stop()
  await first?.close()
})

/**
 * A server on a fresh data dir, and `more` instances on the same one, on one clock. They share
 * this thread, so no instance may leave a batch open while another writes (it would wait for a
 * lock only this thread can release): their start-up writes are let finish, and `current`
 * commits what it made at once.
 */
async function instances(more = 0) {
  const clock = new TestClock(Date.UTC(2026, 10, 26, 12))
  const a = await startTestServer({ owner: false, clock })
  const others: TestServer[] = []
  for (let i = 0; i < more; i++) {
    others.push(await startTestServer({ owner: false, clock, dataDir: a.dir }))
  }
  servers.push(a, ...others)
  await sleep(20)
  return { clock, a, others }
}

/** The keys `s` seals with now, made if need be and committed before another instance looks. */
async function current(s: TestServer) {
  const keys = await s.ctx.keys.current()
  await s.ctx.writes.flush()
  return keys
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
const DAY = KEY_PERIOD_MS

describe('server keys', () => {
  test('made once at start, one per purpose; a second instance reads the same keys', async () => {
    const { a, others } = await instances(1)
    const b = others[0] as TestServer
    const rows = await a.ctx.store.serverKeys.all()
    expect(rows.map((r) => r.purpose).sort()).toEqual([...KEY_PURPOSES].sort())
    expect(new Set(rows.map((r) => r.period))).toEqual(new Set([a.ctx.keys.periodAt()]))
    for (const r of rows) expect(r.key).toHaveLength(32)
    const ka = await current(a)
    const kb = await current(b)
    for (const p of KEY_PURPOSES) expect(hex(kb.key(p))).toBe(hex(ka.key(p)))
    // Sealed on one, opened on the other.
    const sealed = ka.seal('ceremony', 'chal_1 register', { invite: 'secret' })
    expect(await b.ctx.keys.open('ceremony', 'chal_1 register', sealed)).toEqual({
      invite: 'secret',
    })
  })

  test('an instance that comes second to a new period keeps its key out and uses the first one', async () => {
    const { clock, a, others } = await instances(1)
    const b = others[0] as TestServer
    clock.advance(DAY)
    // The first instance's insert lands between the second's look and its own insert.
    const won = crypto.getRandomValues(new Uint8Array(32))
    await a.ctx.store.serverKeys.add('ceremony', a.ctx.keys.periodAt(), won, clock.now())
    const kb = await current(b)
    expect(hex(kb.key('ceremony'))).toBe(hex(won))
    const rows = (await b.ctx.store.serverKeys.all()).filter((r) => r.period === kb.period)
    expect(rows.map((r) => r.purpose).sort()).toEqual([...KEY_PURPOSES].sort())
    for (const p of KEY_PURPOSES) expect(hex((await current(a)).key(p))).toBe(hex(kb.key(p)))
  })

  test('a value opens in its period and the next, and is refused after, even before erasure', async () => {
    const { clock, a, others } = await instances(1)
    const b = others[0] as TestServer
    const day0 = await current(a)
    const sealed = day0.seal('ceremony', 'ctx', 'v')
    expect(sealed.startsWith(`${day0.period}.`)).toBe(true)

    clock.advance(DAY)
    // The new period seals under a new key, made by whichever instance needs it first.
    const day1 = await current(b)
    expect(day1.period).toBe(day0.period + 1)
    expect(hex(day1.key('ceremony'))).not.toBe(hex(day0.key('ceremony')))
    expect(hex((await current(a)).key('ceremony'))).toBe(hex(day1.key('ceremony')))
    expect(await a.ctx.keys.open('ceremony', 'ctx', sealed)).toBe('v')
    expect(await b.ctx.keys.open('ceremony', 'ctx', sealed)).toBe('v')

    clock.advance(DAY)
    // Retired: still a row (nobody has sealed or rotated since), but it opens nothing.
    expect((await a.ctx.store.serverKeys.all()).some((r) => r.period === day0.period)).toBe(true)
    expect(await a.ctx.keys.open('ceremony', 'ctx', sealed)).toBeUndefined()
    expect(await b.ctx.keys.opening(day0.period)).toBeUndefined()

    // Rotation (hourly, and at start) erases it; a restart is one.
    await a.restart()
    const periods = (await a.ctx.store.serverKeys.all()).map((r) => r.period)
    expect([...new Set(periods)].sort()).toEqual([day0.period + 1, day0.period + 2])
    expect(await b.ctx.keys.open('ceremony', 'ctx', sealed)).toBeUndefined()
  })

  test('the next period opens (an instance whose clock runs behind); two ahead does not', async () => {
    const { clock, a, others } = await instances(1)
    const behind = others[0] as TestServer
    clock.advance(DAY)
    const ahead = (await current(a)).seal('ceremony', 'ctx', 1)
    clock.advance(-DAY)
    expect(await behind.ctx.keys.open('ceremony', 'ctx', ahead)).toBe(1)
    clock.advance(-DAY)
    expect(await behind.ctx.keys.open('ceremony', 'ctx', ahead)).toBeUndefined()
  })

  test('tampered, relabelled, moved or malformed values are refused', async () => {
    const { clock, a } = await instances()
    const keys = a.ctx.keys
    const sealed = (await current(a)).seal('ceremony', 'chal_1 register', { t: 'secret' })
    expect(sealed).not.toContain('secret')
    expect(await keys.open('ceremony', 'chal_1 register', sealed)).toEqual({ t: 'secret' })
    const [period, iv, tag, body] = sealed.split('.') as [string, string, string, string]
    // The first character: the last one of a base64url text may carry only padding bits.
    const flip = (s: string) => `${s.startsWith('A') ? 'B' : 'A'}${s.slice(1)}`
    // A key of the next period exists too: relabelling a value with it must not open it.
    clock.advance(DAY)
    await current(a)
    for (const bad of [
      [period, iv, tag, flip(body)],
      [period, iv, flip(tag), body],
      [period, flip(iv), tag, body],
      [String(Number(period) + 1), iv, tag, body],
      [iv, tag, body], // the old, unlabelled form
      [period, iv, tag],
      [`${period}0`, iv, tag, body],
      [`-${period}`, iv, tag, body],
    ]) {
      expect(await keys.open('ceremony', 'chal_1 register', bad.join('.'))).toBeUndefined()
    }
    expect(await keys.open('ceremony', 'chal_2 register', sealed)).toBeUndefined() // another challenge
    expect(await keys.open('ceremony', 'chal_1 login', sealed)).toBeUndefined()
    expect(await keys.open('email-data', 'chal_1 register', sealed)).toBeUndefined() // another purpose
    expect(await keys.open('ceremony', 'chal_1 register', '')).toBeUndefined()
    expect(await keys.open('ceremony', 'chal_1 register', 'garbage')).toBeUndefined()
  })

  test("an erased key's bytes are gone from the database file and its log", async () => {
    const { clock, a } = await instances()
    const old = (await a.ctx.store.serverKeys.all()).map((r) => Buffer.from(r.key))
    clock.advance(2 * DAY)
    await a.ctx.keys.rotate()
    a.ctx.writes.flush()
    expect((await a.ctx.store.serverKeys.all()).map((r) => r.period)).not.toContain(
      a.ctx.keys.periodAt() - 2,
    )
    a.ctx.db.run('PRAGMA wal_checkpoint(TRUNCATE)')
    const files = ['hark.db', 'hark.db-wal'].map((f) => join(a.dir, f)).filter(existsSync)
    const bytes = Buffer.concat(files.map((f) => readFileSync(f)))
    for (const key of old) expect(bytes.includes(key)).toBe(false)
    // The keys in use are there, as they must be (the test would pass on an empty file).
    const live = await a.ctx.store.serverKeys.all()
    expect(live.some((r) => bytes.includes(Buffer.from(r.key)))).toBe(true)
  })
})
