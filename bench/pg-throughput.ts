/**
 * Send throughput of `dist/hark serve` on Postgres beside its embedded SQLite (issue 20), in
 * the same run: the same load generator (wrk, bench/wrk.ts: its CPU is printed beside the
 * server's), request (the benches' status message), concurrency and channels for each,
 * alternating rounds so that drift of the machine hits every contender alike. Until the seventh
 * session of issue 32 the load came from a Bun client in this process, which
 * cost ~0.1 ms of CPU a send on the same two cores.
 *
 *   bun bench/pg-throughput.ts [--seconds 5] [--rounds 3] [--concurrency 32] [--channels 64]
 *                              [--people 1] [--pg-fsync 1] [--baseline PATH]
 *                              [--baseline-schema N] [--only pg] [--base-socket 1]
 *
 * Three contenders, each with --write-limit 0:
 *   - sqlite: one instance on its data directory's SQLite (bench/compare.ts's Hark);
 *   - pg: one instance on a throwaway local PostgreSQL cluster (test/pg/cluster.ts), its own
 *     --data directory, HARK_DATABASE_URL the cluster's database;
 *   - pg×2: two instances on that same database, the connections split between them (half
 *     each, each with every other channel's token), as behind a load balancer.
 * With `--baseline PATH` (another build of hark, e.g. the commit before a change), a fourth,
 * `pg-base`: that binary as one instance on the same database, in the same rounds, so that a
 * change is measured against what it replaced under the same load of the machine. A build older
 * than the schema (one that refuses the database as too new) runs with `--baseline-schema N`,
 * the schema it knows: before each of its rounds the versions above N are taken off the
 * database's record, allowed only while each of them is empty on Postgres (18 is: index.ts), so
 * the database is then exactly schema N, or only replaces functions (20), whose bodies of
 * schema N are put back; the next contender's start applies them again.
 * SQLite is provisioned as compare.ts does (lib.ts `provision`), Postgres the way an operator
 * would (`withDatabase` over the URL, `addUser`, `addChannel`).
 *
 * The test cluster runs with fsync off; with --pg-fsync 1 (the default) it is started with
 * fsync on (and full_page_writes at its default, on), so that a COMMIT waits for its WAL flush
 * as SQLite's synchronous=FULL waits for its fsync: both durable. --pg-fsync 0 keeps it off.
 * (It was restarted with `pg_ctl restart` until the cluster stopped using pg_ctl, which then
 * failed: started durable, the settings are the same.)
 *
 * Postgres runs on this same machine and shares its cores with Hark and the load generator; a
 * real deployment puts it on its own machine. Needs dist/hark (`bun run build`) and postgresql.
 */
import { readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { SQL } from 'bun'
import { withDatabase } from '../src/cli/admin/command.ts'
import { addChannel, addUser } from '../src/people/service.ts'
import { type PgCluster, startCluster } from '../test/pg/cluster.ts'
import {
  arg,
  argText,
  cpuMs,
  ms,
  provision,
  SEND_BODY,
  type Started,
  startHark,
  startServe,
  tempDataDir,
} from './lib.ts'
import { backTo, checkBaselineSchema, olderBodies } from './pg-baseline.ts'
import { machineTicks, pgCounters, pgCpuMs } from './pg-stats.ts'
import { runWrk } from './wrk.ts'

const SECONDS = arg('seconds', 5)
const ROUNDS = arg('rounds', 3)
const CONCURRENCY = arg('concurrency', 32)
const CHANNELS = arg('channels', 64)
/**
 * The people the channels belong to (round robin): 1 (the default) is one person's agents, the
 * worst case on Postgres, where one person's changes commit one at a time (their row's lock
 * orders their cursor); a team's agents belong to many people. SQLite has one writer either way.
 */
const PEOPLE = Math.max(1, Math.min(arg('people', 1), CHANNELS))
const PG_FSYNC = arg('pg-fsync', 1) !== 0
const BASELINE = argText('baseline')
/** `--only pg`: the one-instance Postgres contenders only (pg, pg-base): more rounds a minute. */
const ONLY_PG = argText('only') === 'pg'
const BASELINE_SCHEMA = arg('baseline-schema', 0)
/**
 * `--base-socket 1`: pg-base reaches Postgres through its Unix-domain socket (the URL's
 * `?host=` the cluster's directory, as libpq reads it), pg through TCP on loopback: with
 * `--baseline dist/hark`, the same build over both, in the same rounds.
 */
const BASE_SOCKET = arg('base-socket', 0) !== 0
if (BASELINE_SCHEMA > 0) checkBaselineSchema(BASELINE_SCHEMA, BASELINE)
const bodies = BASELINE_SCHEMA > 0 ? olderBodies(BASELINE_SCHEMA) : []

// The SQLite contender must not inherit a database URL from the shell.
delete process.env.HARK_DATABASE_URL

/** Every server still running, stopped in `finally` or by the watchdog. */
const running = new Set<Started>()
const dirs: string[] = []
let cluster: PgCluster | undefined

async function stopAll() {
  await Promise.allSettled([...running].map((s) => s.stop()))
  running.clear()
}

async function cleanUp() {
  await stopAll()
  await cluster?.close()
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}

// Bounded in time: each step has its own limit (startup 15 s, a request 10 s, the cluster's
// steps 30 s); past this budget the run is abandoned, everything it started stopped.
const budgetMs = ROUNDS * 3 * (SECONDS + 1 + 20) * 1000 + 180_000
const watchdog = setTimeout(async () => {
  console.error(`pg-throughput: not done after ${Math.round(budgetMs / 1000)} s; stopping`)
  await cleanUp()
  process.exit(1)
}, budgetMs)

function dir(prefix: string): string {
  const d = tempDataDir(prefix)
  dirs.push(d)
  return d
}

async function start(
  data: string,
  env?: Record<string, string>,
  binary?: string,
): Promise<Started> {
  const server = binary
    ? await startServe([binary], data, ['--write-limit', '0'], env ? { env } : {})
    : await startHark(data, ['--write-limit', '0'], env ? { env } : {})
  running.add(server)
  return server
}

interface Measured {
  /** Answered sends per second (2xx), all instances together. */
  perSecond: number
  ok: number
  /** Other statuses, connect, read, write and timeout errors (wrk's --timeout, 2 s). */
  errors: number
  seconds: number
  /** wrk's percentiles; with two instances, the higher of their two runs. */
  p50Ms: number
  p99Ms: number
  /** Hark's CPU (all its instances) per second of the run, in % of one core. */
  harkCpu: number
  /** Postgres' CPU (the postmaster's children: backends, WAL writer, ...), the same way. */
  pgCpu?: number
  /** Postgres' CPU per answered send, in µs (stable under the machine's other load). */
  pgUsPerSend?: number
  /** wrk's CPU (the load generator), the same way: near 100% it is the bottleneck. */
  loadCpu: number
  /** Hark's CPU per answered send, in µs. */
  harkUsPerSend: number
  /** The whole machine's busy share (/proc/stat), in % of all cores. */
  busy: number
  /**
   * Postgres: WAL syncs per 1,000 sends, and transactions committed per send (xact_commit: the
   * send's own, and each statement run outside one, e.g. the token's look-up).
   */
  walSyncs?: number
  commits?: number
}

/** The postmaster's pid, set once the cluster runs (its children are Postgres' processes). */
let postmaster = 0

/**
 * The load on `servers`: wrk (bench/wrk.ts), `CONCURRENCY` connections split between them,
 * each instance sent by its share of the channels' tokens (every n-th), round-robin.
 */
async function measure(
  name: string,
  servers: Started[],
  tokens: string[],
  stats?: SQL,
): Promise<Measured> {
  const connections = Math.max(1, Math.round(CONCURRENCY / servers.length))
  const load = (seconds: number) =>
    Promise.all(
      servers.map((server, i) =>
        runWrk(
          server.url,
          server.proc.pid,
          {
            method: 'POST',
            path: '/v1/messages',
            tokens: tokens.filter((_, t) => t % servers.length === i),
            body: SEND_BODY,
          },
          seconds,
          connections,
        ),
      ),
    )
  await load(1) // warm-up
  // The stats collector flushes a backend's counters when it goes idle, at most once a second.
  if (stats) await Bun.sleep(1_100)
  const before = stats ? await pgCounters(stats) : undefined
  const cpu0 = servers.reduce((n, s) => n + cpuMs(s.proc.pid), 0)
  const pg0 = stats ? pgCpuMs(postmaster) : 0
  const m0 = machineTicks()
  const runs = await load(SECONDS)
  const m1 = machineTicks()
  const pg1 = stats ? pgCpuMs(postmaster) : 0
  const cpu1 = servers.reduce((n, s) => n + cpuMs(s.proc.pid), 0)
  const seconds = Math.max(...runs.map((r) => r.seconds))
  const ok = runs.reduce((n, r) => n + Math.round(r.perSecond * r.seconds), 0)
  const m: Measured = {
    perSecond: runs.reduce((n, r) => n + r.perSecond, 0),
    ok,
    errors: runs.reduce((n, r) => n + r.errors, 0),
    seconds,
    p50Ms: Math.max(...runs.map((r) => r.p50Ms)),
    p99Ms: Math.max(...runs.map((r) => r.p99Ms)),
    harkCpu: (cpu1 - cpu0) / 10 / seconds,
    loadCpu: runs.reduce((n, r) => n + r.wrkCpuMs, 0) / 10 / seconds,
    harkUsPerSend: ((cpu1 - cpu0) * 1000) / Math.max(1, ok),
    busy: ((m1.busy - m0.busy) / (m1.total - m0.total)) * 100,
  }
  if (stats) {
    m.pgCpu = (pg1 - pg0) / 10 / seconds
    m.pgUsPerSend = ((pg1 - pg0) * 1000) / Math.max(1, ok)
  }
  if (stats && before) {
    await Bun.sleep(1_100)
    const after = await pgCounters(stats)
    // Counted after the window too: a few of the warm-down's idle flushes land here, so both
    // are upper bounds (the stats reads themselves are two commits).
    m.walSyncs = ((after.walSync - before.walSync) / Math.max(1, ok)) * 1000
    m.commits = (after.commits - before.commits) / Math.max(1, ok)
  }
  console.log(`  ${name.padEnd(7)} ${line(m)}`)
  return m
}

function line(m: Measured): string {
  const pg =
    m.walSyncs === undefined
      ? ''
      : `  WAL syncs/1k sends ${m.walSyncs.toFixed(0)}  tx/send ${m.commits?.toFixed(2)}`
  return (
    `${m.perSecond.toFixed(0).padStart(6)} msg/s  p50 ${ms(m.p50Ms)}  ` +
    `p99 ${ms(m.p99Ms)}  errors ${m.errors}  hark CPU ${m.harkCpu.toFixed(0)}% ` +
    `(${m.harkUsPerSend.toFixed(0)} µs/send)  load generator CPU ${m.loadCpu.toFixed(0)}%` +
    `${m.pgCpu === undefined ? '' : `  postgres CPU ${m.pgCpu.toFixed(0)}% (${m.pgUsPerSend?.toFixed(0)} µs/send)`}  machine busy ${m.busy.toFixed(0)}%${pg}`
  )
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const loadAvg = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ')

let stats: SQL | undefined
try {
  const sqliteDir = dir('hark-pgtp-sqlite-')
  const sqliteTokens = (await provision(sqliteDir, CHANNELS)).agentTokens

  cluster = await startCluster({ durable: PG_FSYNC })
  const url = await cluster.database('bench')
  const pgTokens = await withDatabase(
    dir('hark-pgtp-admin-'),
    async (p) => {
      const email = (n: number) => `bench${n}@example.com`
      for (let n = 0; n < PEOPLE; n++) await addUser(p, { email: email(n), owner: n === 0 })
      const tokens: string[] = []
      for (let i = 0; i < CHANNELS; i++) {
        tokens.push((await addChannel(p, { email: email(i % PEOPLE), label: `bench ${i}` })).token)
      }
      return tokens
    },
    url,
  )
  stats = new SQL(url, { max: 1 })
  const [pidRow] = await stats`SELECT pg_backend_pid() AS backend`
  postmaster = Number(
    readFileSync(`/proc/${(pidRow as { backend: number }).backend}/stat`, 'utf8')
      .split(') ')[1]
      ?.split(' ')[1],
  )
  const [settings] = await stats`SELECT version() AS version, current_setting('fsync') AS fsync,
    current_setting('synchronous_commit') AS sc, current_setting('wal_sync_method') AS method`
  const s = settings as { version: string; fsync: string; sc: string; method: string }
  const pgEnv = { HARK_DATABASE_URL: url }
  const socketEnv = { HARK_DATABASE_URL: `${url}?host=${encodeURIComponent(cluster.dir)}` }
  const pgDirs = [dir('hark-pgtp-a-'), dir('hark-pgtp-b-')]

  console.log(
    `machine: ${cpus().length} cores (nproc), load ${loadAvg()}; Postgres on this same machine, ` +
      'sharing its cores with hark and the load (a real deployment puts it on its own machine)',
  )
  console.log(
    `${s.version.split(' on ')[0]}: fsync ${s.fsync}, synchronous_commit ${s.sc}, ` +
      `wal_sync_method ${s.method}; SQLite: WAL, synchronous=FULL`,
  )
  console.log(
    `send throughput, ${CONCURRENCY} concurrent senders over ${CHANNELS} channels ` +
      `(of ${PEOPLE} ${PEOPLE === 1 ? 'person' : 'people'} on Postgres), ` +
      `${SECONDS} s × ${ROUNDS} rounds each (alternating), --write-limit 0`,
  )
  const results: {
    sqlite: Measured[]
    pg: Measured[]
    'pg×2': Measured[]
    'pg-base'?: Measured[]
  } = { sqlite: [], pg: [], 'pg×2': [] }
  if (BASELINE) results['pg-base'] = []
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`round ${round} (load ${loadAvg()})`)
    if (!ONLY_PG) {
      try {
        results.sqlite.push(await measure('sqlite', [await start(sqliteDir)], sqliteTokens))
      } finally {
        await stopAll()
      }
    }
    try {
      const one = await start(pgDirs[0] as string, pgEnv)
      results.pg.push(await measure('pg', [one], pgTokens, stats))
    } finally {
      await stopAll()
    }
    if (BASELINE) {
      try {
        if (BASELINE_SCHEMA > 0) await backTo(stats, BASELINE_SCHEMA, bodies)
        const base = await start(pgDirs[0] as string, BASE_SOCKET ? socketEnv : pgEnv, BASELINE)
        results['pg-base']?.push(await measure('pg-base', [base], pgTokens, stats))
      } finally {
        await stopAll()
      }
    }
    if (!ONLY_PG) {
      try {
        const two = [
          await start(pgDirs[0] as string, pgEnv),
          await start(pgDirs[1] as string, pgEnv),
        ]
        results['pg×2'].push(await measure('pg×2', two, pgTokens, stats))
      } finally {
        await stopAll()
      }
    }
  }

  console.log(`median of ${ROUNDS} rounds (load now ${loadAvg()}):`)
  console.log(
    '  contender  msg/s   p50 ms   p99 ms  hark CPU  µs/send  load CPU  pg CPU  pg µs/send  machine  WAL syncs/1k  tx/send  errors',
  )
  const sqliteMedian = median(results.sqlite.map((m) => m.perSecond))
  for (const [name, ms_] of Object.entries(results)) {
    if (ms_.length === 0) continue
    const walSyncs = ms_.map((m) => m.walSyncs).filter((n) => n !== undefined)
    const commits = ms_.map((m) => m.commits).filter((n) => n !== undefined)
    const pgCpus = ms_.map((m) => m.pgCpu).filter((n) => n !== undefined)
    const pgUs = ms_.map((m) => m.pgUsPerSend).filter((n) => n !== undefined)
    const rate = median(ms_.map((m) => m.perSecond))
    console.log(
      `  ${name.padEnd(9)} ${rate.toFixed(0).padStart(6)} ` +
        `${median(ms_.map((m) => m.p50Ms))
          .toFixed(2)
          .padStart(8)} ` +
        `${median(ms_.map((m) => m.p99Ms))
          .toFixed(2)
          .padStart(8)} ` +
        `${`${median(ms_.map((m) => m.harkCpu)).toFixed(0)}%`.padStart(9)} ` +
        `${median(ms_.map((m) => m.harkUsPerSend))
          .toFixed(0)
          .padStart(8)} ` +
        `${`${median(ms_.map((m) => m.loadCpu)).toFixed(0)}%`.padStart(9)} ` +
        `${(pgCpus.length ? `${median(pgCpus).toFixed(0)}%` : '-').padStart(7)} ` +
        `${(pgUs.length ? median(pgUs).toFixed(0) : '-').padStart(11)} ` +
        `${`${median(ms_.map((m) => m.busy)).toFixed(0)}%`.padStart(8)} ` +
        `${(walSyncs.length ? median(walSyncs).toFixed(0) : '-').padStart(13)} ` +
        `${(commits.length ? median(commits).toFixed(2) : '-').padStart(8)} ` +
        `${String(ms_.reduce((n, m) => n + m.errors, 0)).padStart(7)}` +
        (name === 'sqlite' || ONLY_PG
          ? ''
          : `   (${((rate / sqliteMedian) * 100).toFixed(0)}% of sqlite)`),
    )
  }
} finally {
  clearTimeout(watchdog)
  await stats?.close()
  await cleanUp()
}
