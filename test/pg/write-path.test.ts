import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { AsyncStores } from '../../src/core/context.ts'
import { HarkError } from '../../src/core/errors.ts'
import type { Logger } from '../../src/core/log.ts'
import { Waiters } from '../../src/core/waiters.ts'
import { routedStores } from '../../src/db/async-stores.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { WakeBus } from '../../src/db/pg/wake-bus.ts'
import { PgWritePath } from '../../src/db/pg/write-path.ts'
import { openPgStores } from '../../src/server/pg/stores.ts'
import { gate } from '../harness-util.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// The write path on Postgres (issue 20): each unit a transaction of its own on a fresh,
// migrated database. Units write through the real twins (`tx.store.settings`); `tx.store.sql`
// (the unit's own transaction, added for these tests) takes the row locks of the deadlock
// test. Nothing sleeps to prove an absence: a later commit's arrival, or a read on another
// connection, stands for it; waits are bounded (10 s) and never assertions about time.
const skip = skipWithoutPostgres()
const WAIT_MS = 10_000

type TestStores = AsyncStores & { sql: SQL }

/** Tracks whether a promise has settled yet, without consuming its outcome. */
function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false
  void promise.then(
    () => {
      done = true
    },
    () => {
      done = true
    },
  )
  return { promise, settled: () => done }
}

describe.skipIf(skip)('write path on Postgres', () => {
  let cluster: PgCluster
  const closers: (() => Promise<unknown>)[] = []
  let n = 0

  beforeAll(async () => {
    cluster = await startCluster()
  }, 60_000)
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => {})
    await cluster?.close()
  }, 60_000)

  /** A fresh migrated database, a pool on it and a write path over that pool. */
  async function setup(
    options: { url?: string; bus?: WakeBus; waiters?: Pick<Waiters, 'wake'> } = {},
  ) {
    const url = options.url ?? (await cluster.database(`wp_${++n}`))
    const sql = new SQL(url, { max: 4 })
    closers.push(() => sql.close({ timeout: 0 }))
    await migratePostgres(sql)
    // This setup's own waiters, the path's unless the test brings its own.
    const local = new Waiters()
    closers.push(async () => local.close())
    const waiters = options.waiters ?? local
    const logged: string[] = []
    const log: Logger = {
      info: () => {},
      warn: (m) => logged.push(m),
      error: (m) => logged.push(m),
    }
    const path = new PgWritePath<TestStores>(sql, waiters, log, {
      bus: options.bus,
      stores: (tx) => ({ ...openPgStores(tx), sql: tx }),
    })
    const setting = async (key: string) =>
      (await sql`SELECT value FROM settings WHERE key = ${key}`)[0]?.value as string | undefined
    return { url, sql, waiters: local, path, logged, setting }
  }

  test("a unit's writes through tx.store are visible once run resolves", async () => {
    const { path, setting } = await setup()
    const value = await path.run(async (tx) => {
      await tx.store.settings.set('a', '1')
      return (await tx.store.settings.get('a')) ?? 'missing'
    })
    expect(value).toBe('1')
    expect(await setting('a')).toBe('1')
    expect(path.stats()).toEqual({ writes: 1, flushes: 1 })
    expect(await path.apply((tx) => tx.store.settings.set('b', '2'))).toBeUndefined()
    expect(await setting('b')).toBe('2')
    expect(path.settled()).toBeUndefined()
  })

  test('a throwing unit leaves nothing and rejects with its own error', async () => {
    const { path, setting } = await setup()
    const mine = new Error('mine')
    const failed = path.run(async (tx) => {
      await tx.store.settings.set('a', '1')
      throw mine
    })
    expect(await failed.catch((e: unknown) => e)).toBe(mine)
    expect(await setting('a')).toBeUndefined()
    expect(path.stats().writes).toBe(0)
  })

  test('a failing nested unit rolls back alone; its parent commits with the rest', async () => {
    const { path, setting, waiters } = await setup()
    const woken = track(waiters.wait('kept', WAIT_MS))
    const dropped = track(waiters.wait('dropped', WAIT_MS))
    const effects: string[] = []
    await path.run(async (tx) => {
      await tx.store.settings.set('parent', 'p')
      const inner = await path
        .run(async (t) => {
          await t.store.settings.set('inner', 'x')
          t.wake('dropped')
          t.after(() => effects.push('dropped'))
          throw new Error('inner')
        })
        .catch((e: Error) => e.message)
      expect(inner).toBe('inner')
      await path.apply(async (t) => {
        await t.store.settings.set('kept', 'k')
        t.wake('kept')
        t.after(() => effects.push('kept'))
      })
    })
    expect(await setting('parent')).toBe('p')
    expect(await setting('inner')).toBeUndefined()
    expect(await setting('kept')).toBe('k')
    expect(effects).toEqual(['kept'])
    expect(await woken.promise).toBe('woken')
    expect(dropped.settled()).toBe(false)
    expect(path.stats().writes).toBe(1)
  })

  test("an unrelated chain's apply during a unit's await is its own transaction", async () => {
    const { path, setting } = await setup()
    const held = gate()
    const started = gate()
    const outer = track(
      path.run(async (tx) => {
        await tx.store.settings.set('outer', 'o')
        started.open()
        await held.wait
        throw new Error('outer rolled back')
      }),
    )
    await started.wait
    // The test's own chain, not the unit's: it commits while the unit is still open.
    await path.apply((tx) => tx.store.settings.set('other', 'x'))
    expect(await setting('other')).toBe('x')
    expect(outer.settled()).toBe(false)
    held.open()
    expect(await outer.promise.catch((e: Error) => e.message)).toBe('outer rolled back')
    expect(await setting('outer')).toBeUndefined()
    expect(await setting('other')).toBe('x')
  })

  test('local waiters are woken after the commit only, and never on rollback', async () => {
    const woken: { keys: string[]; read: Promise<unknown> }[] = []
    let reader: SQL | undefined
    // Waiters that record what another connection reads at the moment of the wake.
    const recording = {
      wake: (...keys: string[]) => {
        woken.push({ keys, read: (reader as SQL)`SELECT value FROM settings WHERE key = 'w'` })
      },
    }
    const { sql, path } = await setup({ waiters: recording })
    reader = sql
    await path.run(async (tx) => {
      await tx.store.settings.set('w', '1')
      tx.wake('channel:1', 'channel:1', 'user:2')
      tx.wake('channel:1')
      expect(woken).toEqual([])
    })
    expect(woken.map((w) => w.keys)).toEqual([['channel:1', 'user:2']])
    expect(await woken[0]?.read).toEqual([{ value: '1' }])
    const failed = path.run(async (tx) => {
      await tx.store.settings.set('w', '2')
      tx.wake('channel:3')
      throw new Error('no')
    })
    expect(await failed.catch((e: Error) => e.message)).toBe('no')
    expect(woken).toHaveLength(1)
  })

  test("with two wake buses, a commit wakes the other instance's waiter, a rollback does not", async () => {
    const url = await cluster.database(`wp_${++n}`)
    const waitersA = new Waiters()
    const waitersB = new Waiters()
    closers.push(
      async () => waitersA.close(),
      async () => waitersB.close(),
    )
    const busA = await WakeBus.start({ url, waiters: waitersA })
    const busB = await WakeBus.start({ url, waiters: waitersB })
    closers.push(
      () => busA.close(),
      () => busB.close(),
    )
    const b = await setup({ url, bus: busB, waiters: waitersB })
    const committed = track(waitersA.wait('channel:1', WAIT_MS))
    const rolledBack = track(waitersA.wait('channel:2', WAIT_MS))
    const later = track(waitersA.wait('channel:3', WAIT_MS))
    await b.path.run(async (tx) => {
      await tx.store.settings.set('a', '1')
      tx.wake('channel:1')
    })
    expect(await committed.promise).toBe('woken')
    const failed = b.path.run(async (tx) => {
      await tx.store.settings.set('b', '2')
      tx.wake('channel:2')
      throw new Error('rolled back')
    })
    expect(await failed.catch((e: Error) => e.message)).toBe('rolled back')
    await b.path.run((tx) => tx.wake('channel:3'))
    // One listener hears commits in order: channel:3 arriving proves channel:2 never will.
    expect(await later.promise).toBe('woken')
    expect(rolledBack.settled()).toBe(false)
    expect(busA.stats().received).toBe(2)
  })

  test('effects run after the commit, in order; a failing effect is logged', async () => {
    const { path, logged } = await setup()
    const order: string[] = []
    const value = await path.run(async (tx) => {
      tx.after(() => order.push('one'))
      await path.run((t) => t.after(() => order.push('nested')))
      tx.after(() => {
        throw new Error('effect broke')
      })
      tx.after(() => order.push('last'))
      expect(order).toEqual([])
      return 7
    })
    expect(value).toBe(7)
    expect(order).toEqual(['one', 'nested', 'last'])
    expect(logged.some((m) => m.includes('effect broke'))).toBe(true)
  })

  test('a deadlock between two units is retried and both commit', async () => {
    const { sql, path, logged } = await setup()
    await sql`CREATE TABLE pair (id INT PRIMARY KEY, v INT NOT NULL)`
    await sql`INSERT INTO pair VALUES (1, 0), (2, 0)`
    const first = { a: gate(), b: gate() }
    let runs = 0
    /** Locks `one`, waits (first run only) until the other unit holds its first row, locks `two`. */
    const unit = (one: number, two: number, mine: ReturnType<typeof gate>, theirs: Promise<void>) =>
      path.run(async (tx) => {
        const run = ++runs
        await tx.store.sql`UPDATE pair SET v = v + 1 WHERE id = ${one}`
        if (run <= 2) {
          mine.open()
          await theirs
        }
        await tx.store.sql`UPDATE pair SET v = v + 1 WHERE id = ${two}`
        return run
      })
    const results = await Promise.all([
      unit(1, 2, first.a, first.b.wait),
      unit(2, 1, first.b, first.a.wait),
    ])
    expect(results).toHaveLength(2)
    // Usually 3 runs: the victim's once more. On a loaded machine its re-run can take row 1
    // again before the survivor, woken by the victim's end, has re-locked it: a second
    // deadlock, and a third run (the write path allows five). Each re-run is logged.
    expect(runs).toBeGreaterThanOrEqual(3)
    expect(await sql`SELECT id, v FROM pair ORDER BY id`).toEqual([
      { id: 1, v: 2 },
      { id: 2, v: 2 },
    ])
    expect(logged.filter((m) => m.includes('running it again'))).toHaveLength(runs - 2)
    expect(path.stats().writes).toBe(2)
  }, 30_000)

  test('close() waits for a unit in flight, then refuses new units with 503', async () => {
    const { path, setting } = await setup()
    const held = gate()
    const started = gate()
    const unit = track(
      path.run(async (tx) => {
        started.open()
        await held.wait
        await tx.store.settings.set('last', 'in')
      }),
    )
    await started.wait
    // An answer does not wait for this unit (another request's): `run` resolves after COMMIT.
    expect(path.settled()).toBeUndefined()
    const closing = track(path.close())
    // A round trip to the database: time enough for close() to have returned, had it not waited.
    expect(await setting('last')).toBeUndefined()
    expect(closing.settled()).toBe(false)
    held.open()
    await closing.promise
    expect(unit.settled()).toBe(true)
    expect(await setting('last')).toBe('in')
    const refused = await path.run(() => 1).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(HarkError)
    expect((refused as HarkError).status).toBe(503)
  })

  test("ctx.store inside a unit is the unit's transaction (routedStores): its writes seen, its locks no wait", async () => {
    const { path, sql, setting } = await setup()
    await sql`INSERT INTO settings (key, value) VALUES ('locked', 'before')`
    // What a service holds as `ctx.store` on Postgres: the pool's twins, routed into the unit
    // its call chain runs in. Without the routing, the read would miss the uncommitted write and
    // the write would wait on the unit's own row lock from another connection, forever.
    const routed = routedStores(openPgStores(sql), path)
    const inside = await path.run(async (tx) => {
      await tx.store.settings.set('mine', 'uncommitted')
      await tx.store.sql`SELECT 1 FROM settings WHERE key = 'locked' FOR UPDATE`
      const seen = await routed.settings.get('mine')
      const wrote = await Promise.race([
        routed.settings.set('locked', 'inside').then(() => 'written'),
        Bun.sleep(WAIT_MS).then(() => 'waited'),
      ])
      return { seen, wrote }
    })
    expect(inside).toEqual({ seen: 'uncommitted', wrote: 'written' })
    expect(await setting('locked')).toBe('inside')
    // Outside any unit it is the pool's: a unit open elsewhere is not joined.
    const open = gate()
    const written = gate()
    const held = path.run(async (tx) => {
      await tx.store.settings.set('pending', 'x')
      written.open()
      await open.wait
    })
    await written.wait
    expect(await routed.settings.get('pending')).toBeUndefined()
    open.open()
    await held
    expect(await routed.settings.get('pending')).toBe('x')
  })
})
