/**
 * Cross-instance wake latency (issue 20): two "instances" (each a WakeBus with its own Bun.sql
 * clients and its own Waiters) on one throwaway PostgreSQL cluster (test/pg/cluster.ts). Each
 * round parks a waiter on A, then B runs a write transaction (an INSERT and the wake-up's
 * pg_notify) and commits; measured until A's waiter is woken:
 *   - write → wake: from the start of B's transaction (BEGIN, INSERT, notify, COMMIT);
 *   - commit → wake: from the moment B sends COMMIT (its last statement has answered).
 * Then again under load: `--writers` transactions in flight at all times, half on each
 * instance, each waking 5 keys nobody waits on (so A receives B's and skips its own), `--held`
 * other waiters parked on A. Everything runs in this one process: A, B and the load share one
 * JavaScript thread, so the figures are pessimistic.
 *
 * The test cluster runs with fsync off (cluster.ts passes it on the command line, which no
 * ALTER SYSTEM overrides): a commit here skips the WAL flush a durable server waits for before
 * the notification goes out, so on real disks both figures grow by one flush.
 *
 *   bun bench/pg-wake.ts [--rounds 2000] [--writers 16] [--held 1000]
 *
 * Target: p50 < 20 ms, p99 < 100 ms.
 */
import { randomUUID } from 'node:crypto'
import { loadavg } from 'node:os'
import { SQL } from 'bun'
import { Waiters } from '../src/core/waiters.ts'
import { WakeBus } from '../src/db/pg/wake-bus.ts'
import { startCluster } from '../test/pg/cluster.ts'
import { arg, ms, pct } from './lib.ts'

const ROUNDS = arg('rounds', 2000)
const WRITERS = arg('writers', 16)
const HELD = arg('held', 1000)

interface Instance {
  waiters: Waiters
  bus: WakeBus
  /** The pool the measured writes use. */
  sql: SQL
  /** The pool the load uses, so measured writes never queue behind it in Bun. */
  load: SQL
}

async function instance(url: string): Promise<Instance> {
  const waiters = new Waiters()
  const bus = await WakeBus.start({ url, waiters })
  const sql = new SQL(url, { max: 2 })
  // Half the writers run on each instance.
  const load = new SQL(url, { max: Math.ceil(WRITERS / 2) })
  await sql`SELECT 1`
  return { waiters, bus, sql, load }
}

/** A write on `at`: one change row and its wake-up, one transaction. */
async function write(at: Instance, via: SQL, keys: string[], sent?: (t: number) => void) {
  await via.begin(async (tx) => {
    await tx`INSERT INTO changes (key, at) VALUES (${keys[0] as string}, ${Date.now()})`
    await at.bus.notify(tx, keys)
    sent?.(performance.now())
  })
}

async function rounds(a: Instance, b: Instance, n: number) {
  const writeToWake: number[] = []
  const commitToWake: number[] = []
  for (let i = 0; i < n; i++) {
    const key = `channel:${randomUUID()}`
    let woken = 0
    const parked = a.waiters.wait(key, 5_000).then((outcome) => {
      if (outcome !== 'woken') throw new Error(`round ${i}: ${outcome}, not woken`)
      woken = performance.now()
    })
    let committing = 0
    const started = performance.now()
    await write(b, b.sql, [key], (t) => {
      committing = t
    })
    await parked
    writeToWake.push(woken - started)
    commitToWake.push(woken - committing)
  }
  return { writeToWake, commitToWake }
}

function report(label: string, samples: number[]) {
  const s = [...samples].sort((x, y) => x - y)
  const max = s[s.length - 1] ?? Number.NaN
  console.log(`  ${label.padEnd(15)} p50 ${ms(pct(s, 50))}  p99 ${ms(pct(s, 99))}  max ${ms(max)}`)
}

const cluster = await startCluster()
try {
  const url = await cluster.database('bench')
  const setup = new SQL(url, { max: 1 })
  await setup`CREATE TABLE changes (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, key TEXT NOT NULL, at BIGINT NOT NULL)`
  const [{ fsync }] = await setup`SELECT current_setting('fsync') AS fsync`
  await setup.close()
  const a = await instance(url)
  const b = await instance(url)
  console.log(
    `PostgreSQL ${cluster.url.replace(/\/postgres$/, '/bench')}, fsync ${fsync}; load: ${loadAvg()}`,
  )

  await rounds(a, b, 100) // warm-up: connections, prepared statements, JIT
  const idle = await rounds(a, b, ROUNDS)
  console.log(`idle, ${ROUNDS} rounds:`)
  report('write → wake', idle.writeToWake)
  report('commit → wake', idle.commitToWake)

  // The load: writers on both instances, and other polls parked on A for the whole run.
  const held = Array.from({ length: HELD }, () =>
    a.waiters.wait(`channel:${randomUUID()}`, 600_000),
  )
  let running = true
  let loadWrites = 0
  const writer = async (at: Instance) => {
    while (running) {
      const keys = Array.from({ length: 5 }, () => `channel:${randomUUID()}`)
      await write(at, at.load, keys)
      loadWrites++
    }
  }
  const writers = Array.from({ length: WRITERS }, (_, i) => writer(i % 2 === 0 ? b : a))
  await Bun.sleep(500)
  const loadStart = performance.now()
  const writesBefore = loadWrites
  const loaded = await rounds(a, b, ROUNDS)
  const perSecond = ((loadWrites - writesBefore) * 1000) / (performance.now() - loadStart)
  running = false
  await Promise.all(writers)
  console.log(
    `loaded, ${ROUNDS} rounds; ${WRITERS} writers (${Math.round(perSecond)} write tx/s, 5 keys each), ${HELD} other waiters held on A:`,
  )
  report('write → wake', loaded.writeToWake)
  report('commit → wake', loaded.commitToWake)
  const [sa, sb] = [a.bus.stats(), b.bus.stats()]
  console.log(
    `A received ${sa.received}, skipped ${sa.own} of its own; B received ${sb.received}, skipped ${sb.own}; safety-net wake-alls: A ${sa.wakeAlls}, B ${sb.wakeAlls} (late self-checks waited out: ${sa.lateChecks + sb.lateChecks}); load now: ${loadAvg()}`,
  )
  a.waiters.close()
  await Promise.all(held)
  for (const at of [a, b]) {
    await at.bus.close()
    await at.sql.close()
    await at.load.close()
  }
} finally {
  await cluster.close()
}

function loadAvg(): string {
  return loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')
}
