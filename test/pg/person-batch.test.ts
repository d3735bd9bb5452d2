import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { AsyncStores } from '../../src/core/context.ts'
import type { Logger } from '../../src/core/log.ts'
import { Waiters } from '../../src/core/waiters.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { PgWritePath } from '../../src/db/pg/write-path.ts'
import { openPgStores } from '../../src/server/pg/stores.ts'
import { gate } from '../harness-util.ts'
import { msg } from '../stores/message-rows.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// A person's units batched on Postgres (issue 32): units given one `batch` key that arrive
// while a transaction of that key runs share the next one, each in its own savepoint, under one
// hold of the person's row lock and one COMMIT. What must still hold: each unit all or nothing
// and alone in failing, every caller answered after the COMMIT, and one person's `seq` in
// commit order across instances, so a `seq > cursor` reader never skips a row. Nothing sleeps
// to prove an absence: the database's own view (pg_locks) says when a COMMIT waits.
const skip = skipWithoutPostgres()

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

/** A plain agent message of `channel`, as the send path inserts it. */
const message = (id: string, channel: string) => msg(id, channel, { created_at: 0 })

/** The advisory lock the test's COMMIT gate takes (see `holdCommits`). */
const COMMIT_GATE = 4242

describe.skipIf(skip)('a person’s units batched on Postgres', () => {
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

  /** A fresh migrated database with one person (`ann`) and two channels of hers. */
  async function database() {
    const url = await cluster.database(`pb_${++n}`)
    const sql = new SQL(url, { max: 4 })
    closers.push(() => sql.close({ timeout: 0 }))
    await migratePostgres(sql)
    await sql`INSERT INTO users (id, email, created_at) VALUES ('ann', 'ann@x.org', 0)`
    await sql`INSERT INTO channels (id, user_id, label, created_at, updated_at)
              VALUES ('c1', 'ann', 'one', 0, 0), ('c2', 'ann', 'two', 0, 0)`
    return { url, sql }
  }

  /** A write path (an instance) on `url`, with its own pool. */
  function instance(url: string) {
    const sql = new SQL(url, { max: 8 })
    closers.push(() => sql.close({ timeout: 0 }))
    const waiters = new Waiters()
    closers.push(async () => waiters.close())
    const logged: string[] = []
    const log: Logger = {
      info: () => {},
      warn: (m) => logged.push(m),
      error: (m) => logged.push(m),
    }
    const path = new PgWritePath<TestStores>(sql, waiters, log, {
      stores: (tx) => ({ ...openPgStores(tx), sql: tx }),
    })
    return { path, logged }
  }

  /**
   * Makes every COMMIT in the database wait while the returned connection holds an advisory
   * lock: a deferred constraint trigger on `gated` takes it at COMMIT. A unit that inserts into
   * `gated` makes its transaction's COMMIT wait there.
   */
  async function holdCommits(sql: SQL) {
    await sql.unsafe(`
      CREATE TABLE gated (id TEXT PRIMARY KEY);
      CREATE FUNCTION gated_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_advisory_xact_lock(${COMMIT_GATE}); RETURN NULL; END $$;
      CREATE CONSTRAINT TRIGGER gated_commit AFTER INSERT ON gated
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION gated_commit();`)
    const holder = await sql.reserve()
    await holder`SELECT pg_advisory_lock(${COMMIT_GATE})`
    /** Until a COMMIT waits on the gate (the database says so). */
    const waiting = async () => {
      for (let i = 0; i < 1_000; i++) {
        const [row] = await sql`SELECT count(*)::int AS n FROM pg_locks
          WHERE locktype = 'advisory' AND objid = ${COMMIT_GATE} AND NOT granted`
        if ((row as { n: number }).n > 0) return
        await Bun.sleep(10)
      }
      throw new Error('no COMMIT came to wait on the gate')
    }
    const release = async () => {
      await holder`SELECT pg_advisory_unlock(${COMMIT_GATE})`
      holder.release()
    }
    return { waiting, release }
  }

  test('units of one batch key that arrive together share one transaction, and are answered only after its COMMIT', async () => {
    const { url, sql } = await database()
    const { path } = instance(url)
    const gateCommit = await holdCommits(sql)
    const first = gate()
    const started = gate()
    // The first unit starts the person's transaction at once and holds it; the next ones queue.
    const lead = track(
      path.run(
        async (tx) => {
          started.open()
          await first.wait
          await tx.store.messages.insert(message('m0', 'c1'))
          return Number((await tx.store.sql`SELECT txid_current() AS id`)[0].id)
        },
        { batch: 'ann' },
      ),
    )
    await started.wait
    const rest = [1, 2, 3, 4, 5].map((i) =>
      track(
        path.run(
          async (tx) => {
            await tx.store.messages.insert(message(`m${i}`, i % 2 ? 'c1' : 'c2'))
            if (i === 5) await tx.store.sql`INSERT INTO gated VALUES ('x')`
            return Number((await tx.store.sql`SELECT txid_current() AS id`)[0].id)
          },
          { batch: 'ann' },
        ),
      ),
    )
    first.open()
    await lead.promise
    // The second transaction (units 1-5) reaches its COMMIT and waits there: no caller of it
    // is answered, and nothing of it is visible.
    await gateCommit.waiting()
    expect(rest.map((r) => r.settled())).toEqual([false, false, false, false, false])
    expect(await sql`SELECT id FROM messages ORDER BY seq`).toEqual([{ id: 'm0' }])
    await gateCommit.release()
    const txids = await Promise.all(rest.map((r) => r.promise))
    expect(new Set(txids).size).toBe(1)
    expect(txids[0]).not.toBe(await lead.promise)
    expect(path.stats()).toEqual({ writes: 6, flushes: 2 })
    // Numbered one after another under the one lock hold, in the order the units ran.
    const rows = await sql`SELECT id, seq FROM messages ORDER BY seq`
    expect(rows.map((r: { id: string }) => r.id)).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5'])
    expect(rows.map((r: { seq: string }) => Number(r.seq))).toEqual([1, 2, 3, 4, 5, 6])
  })

  test('a failing unit in a batch rolls back alone; its siblings commit and every caller is answered', async () => {
    const { url, sql } = await database()
    const { path } = instance(url)
    const held = await lead(path)
    const mine = new Error('mine')
    const outcomes = [
      path.run((tx) => tx.store.messages.insert(message('kept-1', 'c1')), { batch: 'ann' }),
      // Writes, then throws: its row goes with its savepoint.
      path.run(
        async (tx) => {
          await tx.store.messages.insert(message('thrown', 'c1'))
          throw mine
        },
        { batch: 'ann' },
      ),
      // A statement the database refuses (a duplicate id): the transaction would be aborted
      // without the savepoint, and every sibling with it.
      path.run((tx) => tx.store.messages.insert(message('kept-1', 'c2')), { batch: 'ann' }),
      // Its nested unit fails (a savepoint inside the unit's): the unit goes on and commits.
      path.run(
        async (tx) => {
          await path
            .run(async (t) => {
              await t.store.messages.insert(message('nested', 'c2'))
              throw new Error('nested')
            })
            .catch(() => {})
          await tx.store.messages.insert(message('kept-2', 'c2'))
        },
        { batch: 'ann' },
      ),
    ].map((p) =>
      p.then(
        () => 'ok',
        (e: unknown) => e,
      ),
    )
    held.go()
    await held.done
    const [one, thrown, refused, two] = await Promise.all(outcomes)
    expect(one).toBe('ok')
    expect(thrown).toBe(mine)
    expect((refused as { errno?: string }).errno).toBe('23505')
    expect(two).toBe('ok')
    const rows = await sql`SELECT id, channel_id, seq FROM messages ORDER BY seq`
    expect(rows.map((r: { id: string; channel_id: string }) => `${r.id}@${r.channel_id}`)).toEqual([
      'lead@c1',
      'kept-1@c1',
      'kept-2@c2',
    ])
    // No gap: a rolled-back unit's number went back with it.
    expect(rows.map((r: { seq: string }) => Number(r.seq))).toEqual([1, 2, 3])
    expect(path.stats()).toEqual({ writes: 3, flushes: 2 })
  })

  /** A lead unit holding the person's transaction until `first` opens: the next ones queue. */
  async function lead(path: PgWritePath<TestStores>) {
    const first = gate()
    const started = gate()
    const done = path.run(
      async (tx) => {
        started.open()
        await first.wait
        await tx.store.messages.insert(message('lead', 'c1'))
      },
      { batch: 'ann' },
    )
    await started.wait
    return { done, go: first.open }
  }

  test("a batch's units run side by side (pipelined): one that awaits a later sibling's start is not left waiting", async () => {
    const { url, sql } = await database()
    const { path } = instance(url)
    const held = await lead(path)
    // Run one at a time, the first would wait for ever for the second to start: bounded here.
    const second = gate()
    const bound = AbortSignal.timeout(20_000)
    const outcomes = Promise.all([
      path.run(
        async (tx) => {
          await tx.store.messages.insert(message('m1', 'c1'))
          await Promise.race([
            second.wait,
            new Promise((_, reject) => bound.addEventListener('abort', () => reject(bound.reason))),
          ])
          await tx.store.messages.insert(message('m3', 'c1'))
          return Number((await tx.store.sql`SELECT txid_current() AS id`)[0].id)
        },
        { batch: 'ann' },
      ),
      path.run(
        async (tx) => {
          second.open()
          await tx.store.messages.insert(message('m2', 'c2'))
          return Number((await tx.store.sql`SELECT txid_current() AS id`)[0].id)
        },
        { batch: 'ann' },
      ),
    ])
    held.go()
    await held.done
    const [one, two] = await outcomes
    expect(one).toBe(two) // one transaction
    const rows = await sql`SELECT id, seq FROM messages ORDER BY seq`
    // Numbered in the order their inserts reached the database, gapless.
    expect(rows.map((r: { id: string }) => r.id)).toEqual(['lead', 'm1', 'm2', 'm3'])
    expect(rows.map((r: { seq: string }) => Number(r.seq))).toEqual([1, 2, 3, 4])
    expect(path.stats()).toEqual({ writes: 3, flushes: 2 })
  })

  test('a unit that catches its failed statement aborts its batch: no caller is told it committed, nothing is kept', async () => {
    const { url, sql } = await database()
    const { path } = instance(url)
    const held = await lead(path)
    const outcomes = [
      path.run((tx) => tx.store.messages.insert(message('a', 'c1')), { batch: 'ann' }),
      path.run(
        async (tx) => {
          await tx.store.messages.insert(message('b', 'c1'))
          // Refused (a duplicate id), and the error swallowed: the transaction is aborted
          // all the same, whatever the unit answers.
          await tx.store.messages.insert(message('b', 'c2')).catch(() => {})
          return 'swallowed'
        },
        { batch: 'ann' },
      ),
      path.run((tx) => tx.store.messages.insert(message('c', 'c2')), { batch: 'ann' }),
    ].map((p) =>
      p.then(
        () => 'ok',
        () => 'failed',
      ),
    )
    held.go()
    await held.done
    expect(await Promise.all(outcomes)).toEqual(['failed', 'failed', 'failed'])
    const rows = await sql`SELECT id FROM messages ORDER BY seq`
    expect(rows.map((r: { id: string }) => r.id)).toEqual(['lead'])
    expect(path.stats()).toEqual({ writes: 1, flushes: 1 })
  })

  test('two instances writing for one person: seq follows commit order, and a reader following its cursor misses no row', async () => {
    const { url, sql } = await database()
    const a = instance(url)
    const b = instance(url)
    const total = 400
    let written = 0
    // 16 senders per instance, each sending its next message once the last is answered.
    const sender = async (at: PgWritePath<TestStores>, who: string) => {
      for (let i = 0; written < total; i++) {
        written++
        await at.run(
          (tx) => tx.store.messages.insert(message(`${who}.${i}`, i % 2 ? 'c1' : 'c2')),
          {
            batch: 'ann',
          },
        )
      }
    }
    const senders = Promise.all(
      Array.from({ length: 32 }, (_, s) => sender(s % 2 ? a.path : b.path, `s${s}`)),
    )
    let finished = false
    void senders.finally(() => {
      finished = true
    })
    // A reader as the feed reads: rows past its cursor, in seq order, the cursor then moved to
    // the last one. A row committed with a lower seq after the reader passed it would be lost.
    const seen: string[] = []
    let cursor = 0
    for (let reads = 0; reads < 100_000; reads++) {
      const done = finished
      const rows = await sql`SELECT id, seq FROM messages WHERE seq > ${cursor} ORDER BY seq`
      for (const r of rows as { id: string; seq: string }[]) {
        seen.push(r.id)
        cursor = Number(r.seq)
      }
      if (done && rows.length === 0) break
    }
    await senders
    const all = await sql`SELECT id, seq FROM messages ORDER BY seq`
    expect(all.length).toBeGreaterThanOrEqual(total)
    expect(seen).toEqual(all.map((r: { id: string }) => r.id))
    expect(all.map((r: { seq: string }) => Number(r.seq))).toEqual(
      all.map((_: unknown, i: number) => i + 1),
    )
    // The batching happened: fewer transactions than units, on each instance.
    for (const { path } of [a, b]) expect(path.stats().flushes).toBeLessThan(path.stats().writes)
  }, 60_000)
})
