// test-needs: postgres
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import type { AsyncStores } from '../../src/core/context.ts'
import type { Logger } from '../../src/core/log.ts'
import { Waiters } from '../../src/core/waiters.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { sendWakes } from '../../src/db/pg/wake-bus.ts'
import { PgWritePath } from '../../src/db/pg/write-path.ts'
import { openPgStores } from '../../src/server/pg/stores.ts'
import { gate } from '../harness-util.ts'
import { msg } from '../stores/message-rows.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'
import { wireProxy } from './wire-proxy.ts'

// A person's batch on Postgres (issue 32 item 6, fourth pass): while the person's row is
// locked, nothing of the batch waits for this process to read an answer but the units' own
// statements. BEGIN goes down the connection with the units' first statements, and COMMIT
// with the wakes' NOTIFY, without waiting for the answer before them (a simple query in
// Bun.sql waits for every answer before it, and holds back every statement after it). Proved
// through a proxy that keeps back the answers to BEGIN and to the NOTIFY until the client has
// sent something more: a client that waits for either never gets it, and the bound fails.
const skip = skipWithoutPostgres()

type TestStores = AsyncStores & { sql: SQL }

/** Rejects after `ms`: a bound on a wait that, failing, would otherwise hang the test. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: Timer | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)
  })
  return Promise.race([promise, late]).finally(() => clearTimeout(timer))
}

const held = (text: string) => /^\s*BEGIN\s*$/i.test(text) || text.includes('pg_notify(')

describe.skipIf(skip)('a person’s batch on the wire', () => {
  let cluster: PgCluster
  const closers: (() => unknown)[] = []

  beforeAll(async () => {
    cluster = await startCluster()
  }, 60_000)
  afterAll(async () => {
    for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => {})
    await cluster?.close()
  }, 60_000)

  /** A database of its own, a proxy in front of it and a write path through the proxy. */
  async function throughProxy(name: string) {
    const url = await cluster.database(name)
    const admin = new SQL(url, { max: 2 })
    closers.push(() => admin.close({ timeout: 0 }))
    await migratePostgres(admin)
    await admin`INSERT INTO users (id, email, created_at) VALUES ('ann', 'ann@x.org', 0)`
    await admin`INSERT INTO channels (id, user_id, label, created_at, updated_at)
                VALUES ('c1', 'ann', 'one', 0, 0)`
    const proxy = wireProxy(url, held)
    closers.push(() => proxy.close())
    // One connection: the batches' prepared statements are made on it once, in the warm-up.
    const sql = new SQL(proxy.url, { max: 1 })
    closers.push(() => sql.close({ timeout: 0 }))
    const waiters = new Waiters()
    closers.push(() => waiters.close())
    const log: Logger = { info: () => {}, warn: () => {}, error: () => {} }
    const path = new PgWritePath<TestStores>(sql, waiters, log, {
      stores: (tx) => ({ ...openPgStores(tx), sql: tx }),
      bus: { notify: async (tx, keys) => void (await sendWakes(tx, 'hark_test', 'i1', keys)) },
    })
    closers.push(() => path.close())
    return { admin, proxy, path }
  }

  test("a batch's BEGIN goes with its units' statements, its COMMIT with its NOTIFY: no answer awaited between", async () => {
    const { admin, proxy, path } = await throughProxy('wire')

    /**
     * A lone unit that holds the person's transaction open (no wakes: its own COMMIT needs no
     * NOTIFY), then two that queue behind it and run as one pipelined batch, each with a wake.
     */
    const round = async (tag: string, beforeBatch: () => void) => {
      const inside = gate()
      const go = gate()
      const lone = path.run(
        async (tx) => {
          inside.open()
          await go.wait
          return tx.store.messages.insert(msg(`${tag}-0`, 'c1', { created_at: 0 }))
        },
        { batch: 'ann' },
      )
      await inside.wait
      beforeBatch()
      const batch = [1, 2].map((i) =>
        path.run(
          async (tx) => {
            const row = await tx.store.messages.insert(msg(`${tag}-${i}`, 'c1', { created_at: 0 }))
            tx.wake(`k-${tag}-${i}`)
            return row
          },
          { batch: 'ann' },
        ),
      )
      go.open()
      return Promise.all([lone, ...batch])
    }

    // Warm-up, nothing held: the connection prepares BEGIN, COMMIT, the insert and the NOTIFY.
    await within(
      round('warm', () => {}),
      20_000,
      'the warm-up',
    )
    const from = proxy.requests.length
    try {
      const rows = await within(
        round('held', () => {
          proxy.hold = true
        }),
        10_000,
        'the batch, with the answers to BEGIN and NOTIFY held until the next statement',
      )
      expect(rows.map((r) => r.id)).toEqual(['held-0', 'held-1', 'held-2'])
    } finally {
      proxy.unhold()
    }
    // The batch was BEGIN, the two inserts, the NOTIFY and COMMIT, in that order.
    const sent = proxy.requests.slice(from).map((t) => t.trim().split(/\s+/)[0]?.toUpperCase())
    const batchStart = sent.lastIndexOf('BEGIN')
    expect(sent.slice(batchStart)).toEqual(['BEGIN', 'WITH', 'WITH', 'SELECT', 'COMMIT'])
    const seqs = await admin`SELECT id, seq FROM messages WHERE id LIKE 'held-%' ORDER BY seq`
    expect(seqs.map((r: { id: string }) => r.id)).toEqual(['held-0', 'held-1', 'held-2'])
  }, 60_000)

  test("a lone send's BEGIN goes with its statement, its COMMIT with its NOTIFY: one round trip fewer at rest", async () => {
    const { admin, proxy, path } = await throughProxy('wire_lone')
    const send = (id: string) =>
      path.run(
        async (tx) => {
          const row = await tx.store.messages.insert(msg(id, 'c1', { created_at: 0 }))
          tx.wake(`k-${id}`)
          return row
        },
        { batch: 'ann' },
      )
    // Warm-up, nothing held: the connection prepares BEGIN, COMMIT, the insert and the NOTIFY.
    await within(send('lone-warm'), 20_000, 'the warm-up')
    const from = proxy.requests.length
    proxy.hold = true
    try {
      const row = await within(
        send('lone'),
        10_000,
        'a lone send, with the answers to BEGIN and NOTIFY held until the next statement',
      )
      expect(row.id).toBe('lone')
    } finally {
      proxy.unhold()
    }
    const sent = proxy.requests.slice(from).map((t) => t.trim().split(/\s+/)[0]?.toUpperCase())
    expect(sent).toEqual(['BEGIN', 'WITH', 'SELECT', 'COMMIT'])
    const [stored] = await admin`SELECT count(*)::int AS n FROM messages WHERE id = 'lone'`
    expect(stored).toEqual({ n: 1 })
  }, 60_000)
})
