import { Database } from 'bun:sqlite'
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { HarkError } from '../../src/core/errors.ts'
import { silentLogger } from '../../src/core/log.ts'
import { Waiters } from '../../src/core/waiters.ts'
import { openDatabase } from '../../src/db/database.ts'
import { GroupCommit } from '../../src/db/group-commit.ts'
import { tempDir } from '../harness.ts'

/**
 * The write path on SQLite (src/db/group-commit.ts): units batched into one transaction
 * per turn, each in its own savepoint, resolved after one flush of the write-ahead log; wakes
 * and effects once the batch is durable. A real database file; a second connection plays
 * "anyone else" (another process, or the disk after a crash of this one).
 */
let dir: string
let db: Database
let waiters: Waiters
let writes: GroupCommit<unknown>
let other: Database

beforeEach(() => {
  dir = tempDir('hark-gc-')
  db = openDatabase(join(dir, 'hark.db'))
  db.run('CREATE TABLE scratch (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)')
  waiters = new Waiters()
  // Every unit batched: the path a busy server takes (a write after a quiet spell commits alone,
  // tested on its own below).
  writes = new GroupCommit(db, waiters, silentLogger, {}, Number.POSITIVE_INFINITY)
  other = new Database(join(dir, 'hark.db'), { readonly: true })
})

afterEach(async () => {
  await writes.close()
  waiters.close()
  other.close()
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const insert = (v: string) => () =>
  db.query('INSERT INTO scratch (v) VALUES (?) RETURNING id').get(v)
/** What another connection sees: only what was committed. */
const committed = () =>
  other
    .query<{ v: string }, []>('SELECT v FROM scratch ORDER BY id')
    .all()
    .map((r) => r.v)

describe('GroupCommit: batching', () => {
  test('the units of one turn share one commit and one flush, and resolve after it', async () => {
    const before = writes.flushes
    const all = Array.from({ length: 50 }, (_, i) => writes.run(insert(`v${i}`)))
    // Not committed yet: nobody else can see any of it.
    expect(committed()).toEqual([])
    await Promise.all(all)
    expect(writes.flushes - before).toBe(1)
    expect(committed()).toHaveLength(50)
  })

  test('each unit resolves with its own value, in order', async () => {
    const values = await Promise.all(['a', 'b', 'c'].map((v) => writes.run(insert(v))))
    expect(values).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }])
  })

  test('a write made while a flush runs joins the next batch; both become durable', async () => {
    const first = writes.run(insert('first'))
    await new Promise((r) => setImmediate(r)) // the first batch has committed; its flush runs
    const second = writes.run(insert('second'))
    await Promise.all([first, second])
    expect(committed()).toEqual(['first', 'second'])
  })
})

describe('GroupCommit: a write after a quiet spell', () => {
  test('commits alone at once, durable after one flush off the event loop; the next one soon after is batched', async () => {
    // Quiet means a second without a write here, so "soon after" holds on any machine.
    const quiet = new GroupCommit(db, waiters, silentLogger, {}, 1000)
    try {
      const woken = waiters.wait('k', 5_000)
      const before = quiet.flushes
      await quiet.apply((tx) => {
        insert('alone')()
        tx.wake('k')
      })
      // Committed without waiting for the turn to end; its flush runs on the thread pool, so
      // it is not durable yet (SQLite syncing at COMMIT would hold the event loop meanwhile).
      expect(committed()).toEqual(['alone'])
      const flushing = quiet.settled()
      expect(flushing).toBeDefined()
      const next = quiet.run(insert('batched'))
      expect(committed()).toEqual(['alone'])
      await flushing
      expect(await woken).toBe('woken')
      await next
      expect(committed()).toEqual(['alone', 'batched'])
      expect(quiet.settled()).toBeUndefined()
      expect(quiet.flushes - before).toBeLessThanOrEqual(2)
    } finally {
      await quiet.close()
    }
  })
})

describe('GroupCommit: a failing unit fails alone', () => {
  test('its error is its own, nothing of it is kept, its neighbours commit', async () => {
    const ok1 = writes.run(insert('one'))
    const bad = writes.run(() => {
      db.run("INSERT INTO scratch (v) VALUES ('half')")
      throw new HarkError(400, 'not like this', 'body')
    })
    // UNIQUE: a constraint fails inside the batch. Caught at once: the units run one after
    // another while the test awaits the first failure.
    const dup = writes.run(insert('one')).catch((e: unknown) => e)
    const ok2 = writes.run(insert('two'))
    await expect(bad).rejects.toThrow('body: not like this')
    expect(String(await dup)).toMatch(/UNIQUE/)
    expect(await ok1).toEqual({ id: 1 })
    await ok2
    expect(committed()).toEqual(['one', 'two'])
  })

  test('a failed unit wakes no one and runs no effect', async () => {
    const effects: string[] = []
    const woken = waiters.wait('k', 5_000)
    await expect(
      writes.run((tx) => {
        tx.wake('k')
        tx.after(() => effects.push('bad'))
        throw new Error('no')
      }),
    ).rejects.toThrow('no')
    await writes.run((tx) => {
      tx.after(() => effects.push('good'))
    })
    expect(effects).toEqual(['good'])
    expect(waiters.size).toBe(1)
    waiters.close()
    expect(await woken).toBe('closed')
  })

  test('a unit nested in another joins it; a nested failure caught by the outer rolls back only itself', async () => {
    await writes.run(async () => {
      insert('outer')()
      try {
        await writes.apply(() => {
          insert('inner')()
          throw new Error('inner fails')
        })
      } catch {}
      await writes.apply(insert('inner ok'))
    })
    expect(committed()).toEqual(['outer', 'inner ok'])
  })

  test('a commit that fails fails every unit of its batch with 503, keeps nothing, and the next batch works', async () => {
    const a = writes.run(insert('a'))
    const b = writes.run(() => {
      // A deferred constraint is checked at COMMIT: the whole transaction is refused.
      db.run('PRAGMA defer_foreign_keys = ON')
      db.run(
        "INSERT INTO messages (id, channel_id, seq, sender, body, silent, created_at, updated_at) VALUES ('m', 'no-such-channel', 1, 'agent', '{}', 0, 0, 0)",
      )
    })
    for (const p of [a, b]) {
      const error = await p.catch((e: unknown) => e)
      expect(error).toBeInstanceOf(HarkError)
      expect((error as HarkError).status).toBe(503)
    }
    expect(committed()).toEqual([])
    await writes.run(insert('after'))
    expect(committed()).toEqual(['after'])
  })
})

describe('GroupCommit: wakes, effects and settled()', () => {
  test('waiters are woken once per batch, after it is durable, and see every change of it', async () => {
    const seen: string[][] = []
    const outcome = waiters.wait('channel', 5_000).then((o) => {
      seen.push(committed())
      return o
    })
    void writes.run((tx) => {
      insert('x')()
      tx.wake('channel')
    })
    void writes.run((tx) => {
      insert('y')()
      tx.wake('channel', 'channel')
    })
    expect(await outcome).toBe('woken')
    expect(seen).toEqual([['x', 'y']])
    expect(waiters.wakes).toBe(1)
  })

  test('effects run after the batch is durable, in the order of the units', async () => {
    const order: string[] = []
    const p1 = writes.run((tx) => {
      insert('1')()
      tx.after(() => order.push(`after 1 sees ${committed().length}`))
    })
    const p2 = writes.run((tx) => {
      insert('2')()
      tx.after(() => order.push(`after 2 sees ${committed().length}`))
    })
    expect(order).toEqual([])
    await Promise.all([p1, p2])
    expect(order).toEqual(['after 1 sees 2', 'after 2 sees 2'])
  })

  test('settled() is undefined when nothing is under way, else resolves once all is durable', async () => {
    expect(writes.settled()).toBeUndefined()
    await writes.apply(insert('read on the way'))
    const settled = writes.settled()
    expect(settled).toBeInstanceOf(Promise)
    await settled
    expect(committed()).toEqual(['read on the way'])
    expect(writes.settled()).toBeUndefined()
  })
})

describe('GroupCommit: flush, close and misuse', () => {
  test('flush() commits and syncs now, on this thread', async () => {
    await writes.apply(insert('now'))
    await writes.flush()
    expect(committed()).toEqual(['now'])
    expect(writes.settled()).toBeUndefined()
  })

  test('close() keeps what was written and refuses later writes with 503', async () => {
    const pending = writes.run(insert('last'))
    await writes.close()
    await pending
    expect(committed()).toEqual(['last'])
    const error = await writes.run(insert('too late')).catch((e: unknown) => e)
    expect((error as HarkError).status).toBe(503)
  })

  test('a unit inside a transaction opened elsewhere is refused, naming the rule', async () => {
    db.run('BEGIN')
    try {
      await expect(writes.apply(insert('inside'))).rejects.toThrow(/outside the write path/)
    } finally {
      db.run('ROLLBACK')
    }
  })
})
