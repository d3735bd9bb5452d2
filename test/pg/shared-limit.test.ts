import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { createLimits } from '../../src/access/limits.ts'
import { SharedRateLimiter } from '../../src/access/shared-limit.ts'
import { HarkError } from '../../src/core/errors.ts'
import { RateLimiter } from '../../src/core/rate-limit.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// The write limit kept in Postgres (issue 20): two limiters, each on its own pool, stand for two
// instances on one database. Time is a fake clock both share (no test sleeps to pass time), and
// nothing asserts a duration; the only waits are bounded polls for the background sweep.
const skip = skipWithoutPostgres()
const MINUTE = 60_000
const WHAT = 'write rate limit reached'

/** Waits for `cond`, polling; a bounded wait, never an assertion about time. */
async function until(cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error('condition not reached in time')
    await Bun.sleep(10)
  }
}

/** The 429 a take rejected with (fails the test when it passed or failed otherwise). */
async function refusal(taking: Promise<void>): Promise<HarkError> {
  const error = await taking.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof HarkError)) throw new Error(`expected a 429, got ${String(error)}`)
  expect(error.status).toBe(429)
  return error
}

describe.skipIf(skip)('write limit shared in Postgres', () => {
  let cluster: PgCluster
  const closers: (() => Promise<unknown>)[] = []
  let n = 0
  /** A fake clock, epoch-sized so `at` needs its BIGINT. */
  let t = 1_750_000_000_000
  const now = () => t

  beforeAll(async () => {
    cluster = await startCluster()
    // Migrated once; each test copies it (a template nobody is connected to).
    const sql = new SQL(await cluster.database('template_limits'), { max: 1 })
    await migratePostgres(sql)
    await sql.close()
  }, 60_000)
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => {})
    await cluster?.close()
  }, 60_000)

  /** A fresh migrated database and `pools` pools on it, one per "instance". */
  async function instances(pools: number, max = 4): Promise<SQL[]> {
    const url = await cluster.database(`limits_${++n}`, 'template_limits')
    return Array.from({ length: pools }, () => {
      const sql = new SQL(url, { max })
      closers.push(() => sql.close({ timeout: 0 }))
      return sql
    })
  }

  const limiter = (sql: SQL, count: number, sweepEvery?: number) =>
    new SharedRateLimiter(sql, count, MINUTE, now, WHAT, sweepEvery)

  async function keys(sql: SQL): Promise<string[]> {
    const rows = await sql`SELECT key FROM rate_buckets ORDER BY key`
    return rows.map((r: { key: string }) => r.key)
  }

  test('a burst of count passes, then 429 with the seconds until one is back', async () => {
    const [sql] = await instances(1)
    const limit = limiter(sql!, 3)
    for (let i = 0; i < 3; i++) await limit.take('channel-a')
    const error = await refusal(limit.take('channel-a'))
    // One token back takes a minute / 3 = 20 s.
    expect(error.message).toBe(`${WHAT}; retry in 20 s`)
    expect(error.headers).toEqual({ 'Retry-After': '20' })
    // Refused takes take nothing: 5 s later, a quarter token is back, 15 s to go.
    t += 5_000
    const later = await refusal(limit.take('channel-a'))
    expect(later.headers).toEqual({ 'Retry-After': '15' })
    // The same answer as the in-memory limiter for the same takes at the same times.
    let mt = 0
    const memory = new RateLimiter(3, MINUTE, () => mt, WHAT)
    for (let i = 0; i < 3; i++) memory.take('channel-a')
    mt += 5_000
    expect(() => memory.take('channel-a')).toThrow(later.message)
  })

  test('the bucket refills with time, never past count', async () => {
    const [sql] = await instances(1)
    const limit = limiter(sql!, 3)
    for (let i = 0; i < 3; i++) await limit.take('k')
    await refusal(limit.take('k'))
    t += 20_000 // one token back
    await limit.take('k')
    await refusal(limit.take('k'))
    t += 10 * MINUTE // idle long: full again, but only `count` full
    for (let i = 0; i < 3; i++) await limit.take('k')
    await refusal(limit.take('k'))
  })

  test('two instances share one budget', async () => {
    const [a, b] = await instances(2)
    const one = limiter(a!, 10)
    const two = limiter(b!, 10)
    for (let i = 0; i < 10; i++) await (i % 2 ? one : two).take('person:p')
    await refusal(one.take('person:p'))
    await refusal(two.take('person:p'))
    t += 6_000 // one token back, for whichever instance asks first
    await two.take('person:p')
    await refusal(one.take('person:p'))
  })

  test('concurrent takes across instances admit exactly count', async () => {
    const [a, b] = await instances(2, 10)
    const one = limiter(a!, 20)
    const two = limiter(b!, 20)
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? one : two).take('channel-hot')),
    )
    const passed = results.filter((r) => r.status === 'fulfilled').length
    const refused = results.filter(
      (r) => r.status === 'rejected' && r.reason instanceof HarkError && r.reason.status === 429,
    ).length
    expect(passed).toBe(20)
    expect(refused).toBe(30)
    const [row] = await a!`SELECT tokens FROM rate_buckets WHERE key = 'channel-hot'`
    expect(row.tokens).toBe(0)
  })

  test('a count of 0 is off and asks the database nothing', async () => {
    const [sql] = await instances(1)
    for (let i = 0; i < 200; i++) await limiter(sql!, 0).take('k')
    expect(await keys(sql!)).toEqual([])
    // On a closed pool too: not one query.
    const closed = new SQL(cluster.url, { max: 1 })
    await closed.close()
    await new SharedRateLimiter(closed, 0, MINUTE, now, WHAT).take('k')
  })

  test('keys are independent', async () => {
    const [sql] = await instances(1)
    const limit = limiter(sql!, 2)
    await limit.take('a')
    await limit.take('a')
    await refusal(limit.take('a'))
    await limit.take('b')
    await limit.take('b')
    await refusal(limit.take('b'))
    expect(await keys(sql!)).toEqual(['a', 'b'])
  })

  test('the sweep removes only buckets that are full again', async () => {
    const [sql] = await instances(1)
    const limit = limiter(sql!, 3)
    await limit.take('old')
    t += 30_000
    await limit.take('recent')
    t += 30_000
    // 'old' was last touched a minute ago: full again; 'recent' half a minute ago: not yet.
    expect(await limit.sweep()).toBe(1)
    expect(await keys(sql!)).toEqual(['recent'])
    // A swept key is a full bucket: count passes, then 429.
    for (let i = 0; i < 3; i++) await limit.take('old')
    await refusal(limit.take('old'))
  })

  test('takes sweep in the background, now and then', async () => {
    const [sql] = await instances(1)
    const limit = limiter(sql!, 3, 4)
    await limit.take('stale-1')
    await limit.take('stale-2')
    t += MINUTE
    await limit.take('live') // the 3rd take: no sweep yet
    expect(await keys(sql!)).toEqual(['live', 'stale-1', 'stale-2'])
    await limit.take('live') // the 4th: sweeps, without the take waiting for it
    await until(async () => (await keys(sql!)).length === 1)
    expect(await keys(sql!)).toEqual(['live'])
  })

  test('createLimits keeps the write limit in Postgres only when given a pool', async () => {
    const [sql] = await instances(1)
    expect(createLimits({ writeLimit: 120 }, now).writes).toBeInstanceOf(RateLimiter)
    const limits = createLimits({ writeLimit: 2 }, now, sql)
    expect(limits.writes).toBeInstanceOf(SharedRateLimiter)
    // The other limits stay in memory.
    expect(limits.pairStarts).toBeInstanceOf(RateLimiter)
    await limits.writes.take('x')
    await limits.writes.take('x')
    await refusal(Promise.resolve(limits.writes.take('x')))
    expect(await keys(sql!)).toEqual(['x'])
  })
})
