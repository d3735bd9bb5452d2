import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { pgMessageStore } from '../../src/messages/pg-store.ts'
import { msg } from '../stores/message-rows.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// Why `seq` on Postgres comes from the person's counter row (pg migration 006): a change takes
// its number with the UPDATE the message store already runs, inside the writing transaction,
// so one person's numbers are handed out in commit order and a reader's cursor never passes a
// change that commits later. These tests hold two real transactions open against each other.
const skip = skipWithoutPostgres()

const NEXT_SEQ = 'UPDATE users SET change_seq = change_seq + 1 WHERE id = $1 RETURNING change_seq'

/** A plain agent message of `channel` as the message store inserts it. */
const plain = (id: string, channel: string) => msg(id, channel, { created_at: 0 })

/** Resolves with the promise's value, or 'pending' if it has not settled within `ms`. */
async function within<T>(p: Promise<T>, ms: number): Promise<T | 'pending'> {
  return Promise.race([p, Bun.sleep(ms).then(() => 'pending' as const)])
}

describe.skipIf(skip)('postgres change sequence', () => {
  let cluster: PgCluster
  let sql: SQL

  beforeAll(async () => {
    cluster = await startCluster()
    sql = new SQL(await cluster.database('feed'), { max: 4 })
    await migratePostgres(sql)
    await sql`INSERT INTO users (id, email, created_at) VALUES ('ann', 'ann@x.org', 0), ('bob', 'bob@x.org', 0)`
    await sql`INSERT INTO channels (id, user_id, label, created_at, updated_at)
              VALUES ('c-ann', 'ann', 'a', 0, 0), ('c-bob', 'bob', 'b', 0, 0)`
  }, 60_000)
  afterAll(async () => {
    await sql?.close({ timeout: 0 })
    await cluster?.close()
  }, 60_000)

  /**
   * A writing transaction that takes the next seq of `user`, inserts its message, then waits
   * for `release` before committing (or rolling back when `rollBack`).
   */
  function writer(user: string, id: string, release: Promise<void>, rollBack = false) {
    let seq: number | undefined
    let numbered: () => void = () => {}
    const hasSeq = new Promise<void>((r) => {
      numbered = r
    })
    const done = sql
      .begin(async (tx) => {
        const [row] = await tx.unsafe(NEXT_SEQ, [user])
        seq = Number(row.change_seq)
        numbered()
        await tx`INSERT INTO messages (id, channel_id, seq, sender, body, created_at, updated_at)
                 VALUES (${id}, ${`c-${user}`}, ${seq}, 'agent', '{"text":"hi"}', 0, 0)`
        await release
        if (rollBack) throw new Error('rolled back on purpose')
      })
      .catch((e: Error) => {
        if (!rollBack) throw e
      })
    return { hasSeq, done, seq: () => seq }
  }

  test('a second writer for the same person waits and numbers after the first commits', async () => {
    let commitFirst: () => void = () => {}
    const first = writer('ann', 'm1', new Promise((r) => (commitFirst = r)))
    await first.hasSeq
    const second = writer('ann', 'm2', Promise.resolve())
    // The second is held at its UPDATE by the first's row lock: it has no number yet, so it
    // cannot commit a number above one that is still uncommitted.
    expect(await within(second.hasSeq, 300)).toBe('pending')
    const [seen] = await sql`SELECT count(*) AS n FROM messages WHERE channel_id = 'c-ann'`
    expect(Number(seen.n)).toBe(0)
    commitFirst()
    await Promise.all([first.done, second.done])
    expect(second.seq()).toBe((first.seq() ?? 0) + 1)
  })

  test('a rolled-back writer leaves no gap: the next one takes its number', async () => {
    let abort: () => void = () => {}
    const first = writer('ann', 'm3', new Promise((r) => (abort = r)), true)
    await first.hasSeq
    const second = writer('ann', 'm4', Promise.resolve())
    expect(await within(second.hasSeq, 300)).toBe('pending')
    abort()
    await Promise.all([first.done, second.done])
    expect(second.seq()).toBe(first.seq())
    const rows = await sql`SELECT seq FROM messages WHERE channel_id = 'c-ann' ORDER BY seq`
    expect(rows.map((r: { seq: string }) => Number(r.seq))).toEqual([1, 2, 3])
  })

  test("different people's writers never wait for each other", async () => {
    let commitAnn: () => void = () => {}
    const ann = writer('ann', 'm5', new Promise((r) => (commitAnn = r)))
    await ann.hasSeq
    const bob = writer('bob', 'm6', Promise.resolve())
    expect(await within(bob.done, 5_000)).toBeUndefined()
    expect(bob.seq()).toBe(1)
    commitAnn()
    await ann.done
  })

  test("the store's insert draws its rid under the person's lock: one it waited for ascends past a row inserted meanwhile", async () => {
    // The message store numbers and inserts in one statement (a CTE): if its rid were drawn
    // before the person's lock, a row another person inserts while it waits would get a higher
    // rid and commit first, and one person's rids would not follow commit order.
    const store = pgMessageStore(sql)
    const lock = await sql.reserve()
    try {
      await lock`BEGIN`
      await lock`SELECT 1 FROM users WHERE id = 'ann' FOR UPDATE`
      const waiting = sql.begin(async (tx) => {
        const mine = pgMessageStore(tx)
        return await mine.insert(plain('m-waited', 'c-ann'))
      })
      expect(await within(waiting, 300)).toBe('pending')
      const meanwhile = await store.insert(plain('m-meanwhile', 'c-bob'))
      await lock`COMMIT`
      const waited = await waiting
      expect(waited.rid).toBeGreaterThan(meanwhile.rid)
    } finally {
      lock.release()
    }
  })
})
