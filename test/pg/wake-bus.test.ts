import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { SQL } from 'bun'
import { Waiters } from '../../src/core/waiters.ts'
import {
  MAX_PAYLOAD_BYTES,
  readPayload,
  WAKE_CHANNEL,
  WakeBus,
  type WakeBusOptions,
  wakePayloads,
} from '../../src/db/pg/wake-bus.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// Wake-ups across instances (issue 20): two buses, each with its own Bun.sql clients, stand for
// two instances on one database. A waiter parks with a 10 s limit, so "woken" means it was woken
// well within that; nothing here asserts a duration, and nothing sleeps to prove an absence:
// a later notification's arrival proves an earlier one (in commit order) was not delivered.
const skip = skipWithoutPostgres()
const WAIT_MS = 10_000

/** Waits for `cond`, polling; a bounded wait, never an assertion about time. */
async function until(cond: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!(await cond())) {
    if (performance.now() > deadline) throw new Error('condition not reached in time')
    await Bun.sleep(10)
  }
}

/** Tracks whether a promise has settled yet, without consuming its outcome. */
function track<T>(promise: Promise<T>): { promise: Promise<T>; settled: () => boolean } {
  let done = false
  void promise.finally(() => {
    done = true
  })
  return { promise, settled: () => done }
}

describe('wake payloads', () => {
  test('keys are deduplicated and packed into payloads under the limit, in order', () => {
    const keys = Array.from({ length: 3_000 }, (_, i) => `channel:${i}-${'x'.repeat(30)}`)
    const payloads = wakePayloads('abc', [...keys, ...keys.slice(0, 100)])
    const total = keys.reduce((n, k) => n + k.length + 1, 0)
    expect(payloads.length).toBe(Math.ceil(total / (MAX_PAYLOAD_BYTES - 'k abc'.length)))
    const back = payloads.map((p) => {
      expect(Buffer.byteLength(p)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES)
      const message = readPayload(p)
      if (message?.kind !== 'keys') throw new Error('not a keys payload')
      expect(message.from).toBe('abc')
      return message.keys
    })
    expect(back.flat()).toEqual(keys)
  })

  test('no keys, no payload; a key with a newline or too long for a payload is refused', () => {
    expect(wakePayloads('abc', [])).toEqual([])
    expect(() => wakePayloads('abc', ['a\nb'])).toThrow('newline')
    expect(() => wakePayloads('abc', ['x'.repeat(MAX_PAYLOAD_BYTES)])).toThrow('too long')
    expect(readPayload('p abc 7')).toEqual({ kind: 'ping', from: 'abc', n: 7 })
    expect(readPayload('something else')).toBeUndefined()
  })
})

describe.skipIf(skip)('wake bus across instances', () => {
  let cluster: PgCluster
  let admin: SQL
  const closers: (() => Promise<unknown>)[] = []

  beforeAll(async () => {
    cluster = await startCluster()
    admin = new SQL(cluster.url, { max: 1 })
  }, 60_000)
  afterAll(async () => {
    for (const close of closers.reverse()) await close().catch(() => {})
    await admin?.close({ timeout: 0 })
    await cluster?.close()
  }, 60_000)

  /** One "instance": its waiters, its bus and its own pool for writes and reads. */
  interface Instance {
    waiters: Waiters
    bus: WakeBus
    sql: SQL
    /** A write: inserts `keys` as changes and wakes them, in one transaction. */
    write(keys: string[], rollBack?: boolean): Promise<void>
  }

  async function instance(url: string, options: Partial<WakeBusOptions> = {}): Promise<Instance> {
    const waiters = new Waiters()
    const bus = await WakeBus.start({ url, waiters, ...options })
    const sql = new SQL(url, { max: 1 })
    closers.push(
      () => sql.close({ timeout: 0 }),
      () => bus.close(),
      async () => waiters.close(),
    )
    await sql`SELECT 1` // the pool's connection is open from here on
    return {
      waiters,
      bus,
      sql,
      async write(keys, rollBack = false) {
        await sql
          .begin(async (tx) => {
            for (const key of keys) await tx`INSERT INTO changes (key) VALUES (${key})`
            await bus.notify(tx, keys)
            if (rollBack) throw new Error('rolled back on purpose')
          })
          .catch((error: Error) => {
            if (!rollBack) throw error
          })
      },
    }
  }

  /** A fresh database with the table the writes above record their changes in. */
  async function database(name: string): Promise<string> {
    const url = await cluster.database(name)
    const sql = new SQL(url, { max: 1 })
    await sql`CREATE TABLE changes (key TEXT NOT NULL)`
    await sql.close()
    return url
  }

  /** The backend of a bus's listening connection (Bun's LISTEN runs on a connection of its own). */
  async function listenerPid(bus: WakeBus): Promise<number | undefined> {
    const rows = await admin`SELECT pid FROM pg_stat_activity
      WHERE application_name = ${`hark-wake-${bus.instance}`} AND query LIKE 'LISTEN %'`
    return rows[0]?.pid
  }

  async function killListener(bus: WakeBus): Promise<number> {
    let pid: number | undefined
    await until(async () => {
      pid = await listenerPid(bus)
      return pid !== undefined
    })
    await admin`SELECT pg_terminate_backend(${pid})`
    await until(async () => {
      const [row] = await admin`SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = ${pid}`
      return row.n === 0
    })
    return pid as number
  }

  /**
   * A long-poll as a Postgres-backed instance must hold one: park first, then read, so a wake
   * that lands during the read is not lost; woken, read again. True once `key` is found.
   * `missed` is told after each read that did not find it.
   */
  async function poll(at: Instance, key: string, missed: () => void): Promise<boolean> {
    const deadline = performance.now() + WAIT_MS
    for (;;) {
      const stop = new AbortController()
      const parked = at.waiters.wait(key, deadline - performance.now(), stop.signal)
      const [row] = await at.sql`SELECT count(*)::int AS n FROM changes WHERE key = ${key}`
      if (row.n > 0) {
        stop.abort()
        return true
      }
      missed()
      if ((await parked) !== 'woken') return false
    }
  }

  test("a commit on B wakes A's waiter; B's own notification comes back and is skipped", async () => {
    const url = await database('basic')
    const [a, b] = [await instance(url), await instance(url)]
    const onA = a.waiters.wait('channel:c1', WAIT_MS)
    const onB = track(b.waiters.wait('channel:c1', WAIT_MS))
    await b.write(['channel:c1'])
    expect(await onA).toBe('woken')
    // A's write comes after B's in commit order: once it reached B, B's own had too.
    const sentinel = b.waiters.wait('sentinel', WAIT_MS)
    await a.write(['sentinel'])
    expect(await sentinel).toBe('woken')
    expect(onB.settled()).toBe(false)
    expect(b.bus.stats()).toMatchObject({ sent: 1, own: 1, received: 1, wakeAlls: 0 })
    await until(() => a.bus.stats().own === 1)
    expect(a.bus.stats()).toMatchObject({ sent: 1, own: 1, received: 1, wakeAlls: 0 })
  })

  test('a rolled-back transaction wakes no one', async () => {
    const url = await database('rollback')
    const [a, b] = [await instance(url), await instance(url)]
    const rolledBack = track(a.waiters.wait('ask:m1', WAIT_MS))
    const committed = a.waiters.wait('ask:m2', WAIT_MS)
    await b.write(['ask:m1'], true)
    await b.write(['ask:m2'])
    expect(await committed).toBe('woken')
    expect(rolledBack.settled()).toBe(false)
    expect(a.bus.stats().received).toBe(1)
  })

  test('many keys in one transaction, past one payload, all arrive', async () => {
    const url = await database('many')
    const [a, b] = [await instance(url), await instance(url)]
    const keys = Array.from({ length: 2_000 }, () => `channel:${randomUUID()}`)
    const polls = keys.map((k) => a.waiters.wait(k, WAIT_MS))
    await b.write([...keys, ...keys.slice(0, 50)])
    const outcomes = await Promise.all(polls)
    expect(outcomes.filter((o) => o !== 'woken')).toEqual([])
    const expected = wakePayloads(b.bus.instance, keys).length
    expect(expected).toBeGreaterThan(5)
    expect(b.bus.stats().sent).toBe(expected)
    expect(a.bus.stats().received).toBe(expected)
  }, 30_000)

  test("the payload limit is the server's: 7999 bytes go, 8000 are refused", async () => {
    const ok = admin.unsafe('SELECT pg_notify($1, $2)', ['x', 'a'.repeat(MAX_PAYLOAD_BYTES)])
    expect(await ok).toHaveLength(1)
    const tooLong = admin.unsafe('SELECT pg_notify($1, $2)', ['x', 'a'.repeat(8000)])
    await expect(tooLong).rejects.toThrow('payload string too long')
  })

  test('the listener killed: once it is back, every waiter re-reads; notifications flow again', async () => {
    const url = await database('reconnect')
    // No self-check during the test: only the reconnect can wake the parked waiter.
    const a = await instance(url, { checkEveryMs: 600_000 })
    const b = await instance(url)
    const parked = a.waiters.wait('user:u1', WAIT_MS)
    const old = await killListener(a.bus)
    expect(await parked).toBe('woken')
    expect(a.bus.stats()).toMatchObject({ reconnects: 1, wakeAlls: 1, received: 0 })
    await until(async () => ((await listenerPid(a.bus)) ?? old) !== old)
    const later = a.waiters.wait('user:u1', WAIT_MS)
    await b.write(['user:u1'])
    expect(await later).toBe('woken')
    expect(a.bus.stats()).toMatchObject({ reconnects: 1, wakeAlls: 1, received: 1 })
  }, 30_000)

  test('a notification lost while the listener is away costs latency, not the change', async () => {
    const url = await database('lost')
    const a = await instance(url, { checkEveryMs: 100, pingTimeoutMs: 300 })
    const b = await instance(url)
    await until(() => a.bus.stats().checks > 0) // the ping connection is open
    // Refuse new connections, so A's listener cannot come back while B writes: its
    // notification is lost for certain, and only the self-check can make A read again.
    await admin.unsafe('ALTER DATABASE lost ALLOW_CONNECTIONS false')
    let allowed = false
    try {
      await killListener(a.bus)
      // B writes only once A has read and not found it: A must be woken to see it.
      const readOnce = Promise.withResolvers<void>()
      const found = poll(a, 'channel:lost', readOnce.resolve)
      await readOnce.promise
      await b.write(['channel:lost'])
      expect(await found).toBe(true)
      expect(a.bus.stats()).toMatchObject({ received: 0, reconnects: 0 })
      expect(a.bus.stats().missedChecks).toBeGreaterThan(0)
      await admin.unsafe('ALTER DATABASE lost ALLOW_CONNECTIONS true')
      allowed = true
      // Bun reconnects with backoff; then the notifications arrive again.
      await until(() => a.bus.stats().reconnects === 1, 20_000)
      const again = a.waiters.wait('channel:again', WAIT_MS)
      await b.write(['channel:again'])
      expect(await again).toBe('woken')
      expect(a.bus.stats().received).toBe(1)
    } finally {
      if (!allowed) await admin.unsafe('ALTER DATABASE lost ALLOW_CONNECTIONS true')
    }
  }, 30_000)

  test('the self-check passes quietly while the listener is there', async () => {
    const url = await database('quiet')
    const a = await instance(url, { checkEveryMs: 20, pingTimeoutMs: 5_000 })
    const b = await instance(url, { checkEveryMs: 20, pingTimeoutMs: 5_000 })
    const parked = track(a.waiters.wait('channel:q', WAIT_MS))
    await until(() => a.bus.stats().checks >= 5 && b.bus.stats().checks >= 5)
    expect(parked.settled()).toBe(false)
    expect(a.bus.stats()).toMatchObject({ missedChecks: 0, wakeAlls: 0, received: 0 })
    await b.write(['channel:q'])
    expect(await parked.promise).toBe('woken')
  })

  test('a busy listener is not a deaf one: a late ping, with traffic arriving, wakes no one', async () => {
    const url = await database('late')
    // A's connections take 1.2 s to send a notification: its pings come back late (in the
    // second 1 s window), through a pg_notify that its role's search_path finds before
    // pg_catalog's. The windows are long beside B's traffic (a notification every few ms) so
    // that a loaded machine's stall cannot empty one and make the listener look deaf.
    const setup = new SQL(url, { max: 1 })
    await setup.unsafe(`CREATE ROLE slow_pinger LOGIN SUPERUSER;
      CREATE SCHEMA slow;
      CREATE FUNCTION slow.pg_notify(channel text, payload text) RETURNS void LANGUAGE sql
        AS $$ SELECT pg_sleep(1.2); SELECT pg_catalog.pg_notify(channel, payload) $$;
      ALTER ROLE slow_pinger IN DATABASE late SET search_path = slow, pg_catalog, public`)
    await setup.close()
    const slowUrl = url.replace('postgres@', 'slow_pinger@')
    const a = await instance(slowUrl, { checkEveryMs: 10, pingTimeoutMs: 1_000 })
    const b = await instance(url)
    const parked = track(a.waiters.wait('channel:never', WAIT_MS))
    let writing = true
    const traffic = (async () => {
      while (writing) await b.write(['channel:other'])
    })()
    try {
      await until(() => a.bus.stats().checks >= 2, 20_000)
    } finally {
      writing = false
      await traffic
    }
    expect(a.bus.stats()).toMatchObject({ missedChecks: 0, wakeAlls: 0 })
    expect(a.bus.stats().lateChecks).toBeGreaterThan(0)
    expect(parked.settled()).toBe(false)
  }, 30_000)

  test('a payload this version cannot read wakes everyone rather than nobody', async () => {
    const url = await database('unreadable')
    const a = await instance(url)
    const parked = a.waiters.wait('channel:x', WAIT_MS)
    await a.sql.notify(WAKE_CHANNEL, 'v2 something new')
    expect(await parked).toBe('woken')
    expect(a.bus.stats().wakeAlls).toBe(1)
  })

  test('close: idempotent, the listening connection ends, later notifications reach no one', async () => {
    const url = await database('closing')
    const a = await instance(url)
    const b = await instance(url)
    await until(async () => (await listenerPid(a.bus)) !== undefined)
    const parked = track(a.waiters.wait('channel:z', WAIT_MS))
    await Promise.all([a.bus.close(), a.bus.close()])
    await until(async () => {
      const rows = await admin`SELECT pid FROM pg_stat_activity
        WHERE application_name = ${`hark-wake-${a.bus.instance}`}`
      return rows.length === 0
    })
    const onB = b.waiters.wait('channel:z', WAIT_MS)
    await a.write(['channel:z']) // A's pool still writes; B hears it, closed A does not
    expect(await onB).toBe('woken')
    expect(parked.settled()).toBe(false)
    expect(a.bus.stats().own).toBe(0)
  })
})
