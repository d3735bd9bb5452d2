import { Database } from 'bun:sqlite'
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { silentLogger } from '../../src/core/log.ts'
import { Waiters } from '../../src/core/waiters.ts'
import { openDatabase } from '../../src/db/database.ts'
import { GroupCommit } from '../../src/db/group-commit.ts'
import { gate, tempDir } from '../harness.ts'

/**
 * Async units on the SQLite write path (src/db/group-commit.ts, units.ts): a unit awaits
 * its stores, the units of a batch run one at a time each in its savepoint, and the unit a call
 * belongs to is known by its async call chain, so a nested `apply` joins its unit while an
 * `apply` of unrelated code that runs during the unit's await queues as a unit of its own.
 * No timers: the tests hold a unit open with a promise they release themselves.
 */
let dir: string
let db: Database
let waiters: Waiters
let writes: GroupCommit<ScratchStore>
let other: Database

/** A store over the scratch table, async as the server's stores are. */
interface ScratchStore {
  insert(v: string): Promise<number>
  count(): Promise<number>
}

beforeEach(() => {
  dir = tempDir('hark-gca-')
  db = openDatabase(join(dir, 'hark.db'))
  db.run('CREATE TABLE scratch (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)')
  waiters = new Waiters()
  const store: ScratchStore = {
    insert: async (v) =>
      (db.query('INSERT INTO scratch (v) VALUES (?) RETURNING id').get(v) as { id: number }).id,
    count: async () => (db.query('SELECT count(*) AS n FROM scratch').get() as { n: number }).n,
  }
  writes = new GroupCommit(db, waiters, silentLogger, store, Number.POSITIVE_INFINITY)
  other = new Database(join(dir, 'hark.db'), { readonly: true })
})

afterEach(async () => {
  await writes.close()
  waiters.close()
  other.close()
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const committed = () =>
  other
    .query<{ v: string }, []>('SELECT v FROM scratch ORDER BY id')
    .all()
    .map((r) => r.v)

describe('GroupCommit: async units', () => {
  test('a unit awaits several store calls and commits them together', async () => {
    const n = await writes.run(async (tx) => {
      await tx.store.insert('a')
      await tx.store.insert('b')
      await tx.store.insert('c')
      return tx.store.count()
    })
    expect(n).toBe(3)
    expect(committed()).toEqual(['a', 'b', 'c'])
  })

  test("two requests' units run one after the other, and each one that fails rolls back alone", async () => {
    const events: string[] = []
    const unit = (name: string, fails: boolean) =>
      writes.run(async (tx) => {
        events.push(`${name} starts`)
        await tx.store.insert(`${name}1`)
        await tx.store.insert(`${name}2`)
        events.push(`${name} ends`)
        if (fails) throw new Error(`${name} fails`)
      })
    const a = unit('a', true).catch((e: unknown) => e)
    const b = unit('b', false)
    const c = unit('c', true).catch((e: unknown) => e)
    const d = unit('d', false)
    expect(String(await a)).toContain('a fails')
    expect(String(await c)).toContain('c fails')
    await Promise.all([b, d])
    expect(events).toEqual([
      'a starts',
      'a ends',
      'b starts',
      'b ends',
      'c starts',
      'c ends',
      'd starts',
      'd ends',
    ])
    expect(committed()).toEqual(['b1', 'b2', 'd1', 'd2'])
  })

  test('an apply inside the async unit, however deep its awaits, joins it (and goes with it)', async () => {
    const before = writes.stats().writes
    const helper = async (v: string) => {
      await writes.apply(async (tx) => {
        await tx.store.insert(v)
      })
    }
    await writes.run(async (tx) => {
      await tx.store.insert('outer')
      await helper('inner')
      await writes.apply((tx2) => tx2.store.insert('inner 2'))
    })
    expect(committed()).toEqual(['outer', 'inner', 'inner 2'])
    expect(writes.stats().writes - before).toBe(1)
    const failed = await writes
      .run(async (tx) => {
        await tx.store.insert('outer again')
        await helper('inner again')
        throw new Error('the outer unit fails')
      })
      .catch((e: unknown) => e)
    expect(String(failed)).toContain('the outer unit fails')
    expect(committed()).toEqual(['outer', 'inner', 'inner 2'])
  })

  test('a nested unit that fails inside an async unit rolls back only itself', async () => {
    await writes.run(async (tx) => {
      await tx.store.insert('outer')
      await writes
        .apply(async (tx2) => {
          await tx2.store.insert('inner')
          throw new Error('inner fails')
        })
        .catch(() => {})
      await tx.store.insert('after')
    })
    expect(committed()).toEqual(['outer', 'after'])
  })

  test("an apply of other code that runs during a unit's await does not join it: it queues", async () => {
    const held = gate()
    const started = gate()
    const events: string[] = []
    const first = writes
      .run(async (tx) => {
        await tx.store.insert('first')
        started.open()
        await held.wait
        events.push('first ends')
        throw new Error('first fails')
      })
      .catch((e: unknown) => e)
    await started.wait
    // Another request's code, on the event loop while the first unit awaits.
    const unrelated = writes.apply(async (tx) => {
      events.push('unrelated runs')
      return tx.store.insert('unrelated')
    })
    // And one from a timer callback, the same.
    const fromTimer = new Promise((resolve) => {
      setImmediate(() => resolve(writes.apply((tx) => tx.store.insert('from a timer'))))
    })
    await new Promise((resolve) => setImmediate(resolve))
    expect(events).toEqual([])
    held.open()
    expect(String(await first)).toContain('first fails')
    await unrelated
    await fromTimer
    await writes.flush()
    expect(events).toEqual(['first ends', 'unrelated runs'])
    // The first unit's row went with it; the others, units of their own, stayed.
    expect(committed()).toEqual(['unrelated', 'from a timer'])
  })

  test('the batch commits only once the unit running at the end of the turn is done', async () => {
    const held = gate()
    const started = gate()
    const unit = writes.run(async (tx) => {
      await tx.store.insert('slow')
      started.open()
      await held.wait
      await tx.store.insert('slow 2')
    })
    await started.wait
    // Several turns pass: the commit waits for the unit, nothing of it is visible.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(committed()).toEqual([])
    held.open()
    await unit
    expect(committed()).toEqual(['slow', 'slow 2'])
  })

  test('flush() waits for the unit under way and commits all of it', async () => {
    const held = gate()
    const started = gate()
    const unit = writes.apply(async (tx) => {
      await tx.store.insert('x')
      started.open()
      await held.wait
      await tx.store.insert('y')
    })
    await started.wait
    const flushed = writes.flush()
    held.open()
    await unit
    await flushed
    expect(committed()).toEqual(['x', 'y'])
  })
})
