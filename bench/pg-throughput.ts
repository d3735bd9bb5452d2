/**
 * Send throughput of `dist/hark serve` on Postgres beside its embedded SQLite (issue 20), in
 * the same run: the same load generator, request, concurrency and channels as bench/compare.ts,
 * alternating rounds so that drift of the machine hits every contender alike.
 *
 *   bun bench/pg-throughput.ts [--seconds 5] [--rounds 3] [--concurrency 32] [--channels 64]
 *                              [--people 1] [--pg-fsync 1] [--baseline PATH]
 *                              [--baseline-schema N] [--only pg] [--base-socket 1]
 *
 * Three contenders, each with --write-limit 0:
 *   - sqlite: one instance on its data directory's SQLite (bench/compare.ts's Hark);
 *   - pg: one instance on a throwaway local PostgreSQL cluster (test/pg/cluster.ts), its own
 *     --data directory, HARK_DATABASE_URL the cluster's database;
 *   - pg×2: two instances on that same database, the closed loop's workers split between them
 *     (half each), as behind a load balancer.
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
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { SQL } from 'bun'
import { withDatabase } from '../src/cli/admin/command.ts'
import { pgMigrations } from '../src/db/pg/migrations/index.ts'
import { addChannel, addUser } from '../src/people/service.ts'
import { type PgCluster, startCluster } from '../test/pg/cluster.ts'
import {
  arg,
  argText,
  closedLoop,
  cpuMs,
  type LoadResult,
  ms,
  pct,
  provision,
  type Started,
  sendRequest,
  startHark,
  startServe,
  tempDataDir,
} from './lib.ts'

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
if (BASELINE_SCHEMA > 0) {
  // Only migrations with no statement on Postgres can be taken off the record this way, or
  // ones that only replace functions' bodies (CREATE OR REPLACE FUNCTION): before the older
  // build's rounds each such function gets back its body of schema N (`olderBodies`), and the
  // next contender's start applies the newer one again.
  const statements = (sql: string) =>
    sql
      .replace(/\$\$[\s\S]*?\$\$/g, '$$$$')
      .replace(/--.*$/gm, '')
      .split(';')
      .map((t) => t.trim())
      .filter(Boolean)
  const emptyOnPg = (sql: string) =>
    statements(sql).every((t) => /^CREATE OR REPLACE FUNCTION /i.test(t) || t === 'SELECT 1')
  const above = pgMigrations.filter((m) => m.version > BASELINE_SCHEMA)
  const notEmpty = above.find((m) => !emptyOnPg(m.sql))
  if (!BASELINE || notEmpty) {
    throw new Error(
      BASELINE
        ? `--baseline-schema ${BASELINE_SCHEMA}: migration ${notEmpty?.version} changes the Postgres schema; the older build cannot run on it`
        : '--baseline-schema needs --baseline PATH',
    )
  }
}
/**
 * The definitions, as of schema `BASELINE_SCHEMA`, of the functions the migrations above it
 * replace: each one's latest `CREATE [OR REPLACE] FUNCTION name(...) ... $$;` at or below it.
 */
const olderBodies: string[] = (() => {
  if (BASELINE_SCHEMA <= 0) return []
  const names = new Set<string>()
  for (const m of pgMigrations.filter((m) => m.version > BASELINE_SCHEMA)) {
    for (const [, name] of m.sql.matchAll(/CREATE OR REPLACE FUNCTION (\w+)\(/gi))
      names.add(name as string)
  }
  return [...names].map((name) => {
    const definition = new RegExp(
      `CREATE (?:OR REPLACE )?FUNCTION ${name}\\([\\s\\S]*?\\$\\$[\\s\\S]*?\\$\\$;`,
      'i',
    )
    const older = pgMigrations
      .filter((m) => m.version <= BASELINE_SCHEMA)
      .map((m) => definition.exec(m.sql)?.[0])
      .filter((d) => d !== undefined)
      .at(-1)
    if (!older) throw new Error(`--baseline-schema: no definition of ${name} at or below it`)
    return older.replace(/^CREATE (OR REPLACE )?FUNCTION/i, 'CREATE OR REPLACE FUNCTION')
  })
})()

/** A request unanswered this long counts as an error (closedLoop has no timeout of its own). */
const REQUEST_TIMEOUT_MS = 10_000

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

interface Measured extends LoadResult {
  /** Hark's CPU (all its instances) per second of the run, in % of one core. */
  harkCpu: number
  /** Postgres' CPU (the postmaster's children: backends, WAL writer, ...), the same way. */
  pgCpu?: number
  /** Postgres' CPU per answered send, in µs (stable under the machine's other load). */
  pgUsPerSend?: number
  /** This process's CPU (the load generator), the same way: near 100% it is the bottleneck. */
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

/** CPU time of the postmaster and its children (those alive now), in ms. */
function pgCpuMs(): number {
  let total = 0
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === postmaster || Number(entry) === postmaster) total += cpuMs(Number(entry))
    } catch {
      // Gone meanwhile.
    }
  }
  return total
}

/** Busy and total jiffies of the whole machine. */
function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string)
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number)
  const total = fields.reduce((a, b) => a + b, 0)
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
  return { busy: total - idle, total }
}

interface PgCounters {
  walSync: number
  commits: number
}

async function pgCounters(sql: SQL): Promise<PgCounters> {
  const [row] = await sql`SELECT (SELECT wal_sync FROM pg_stat_wal)::float8 AS wal_sync,
    (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::float8 AS commits`
  const r = row as { wal_sync: number; commits: number }
  return { walSync: r.wal_sync, commits: r.commits }
}

/** Closed loop on `servers`, worker w on servers[w % n] with channel w's token. */
async function measure(
  name: string,
  servers: Started[],
  tokens: string[],
  stats?: SQL,
): Promise<Measured> {
  const request = (w: number) =>
    sendRequest(
      (servers[w % servers.length] as Started).url,
      tokens[w % tokens.length] as string,
      AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    )
  await closedLoop(1, CONCURRENCY, request) // warm-up
  // The stats collector flushes a backend's counters when it goes idle, at most once a second.
  if (stats) await Bun.sleep(1_100)
  const before = stats ? await pgCounters(stats) : undefined
  const cpu0 = servers.reduce((n, s) => n + cpuMs(s.proc.pid), 0)
  const pg0 = stats ? pgCpuMs() : 0
  const m0 = machineTicks()
  const load0 = cpuMs(process.pid)
  const r = await closedLoop(SECONDS, CONCURRENCY, request)
  const load1 = cpuMs(process.pid)
  const m1 = machineTicks()
  const pg1 = stats ? pgCpuMs() : 0
  const cpu1 = servers.reduce((n, s) => n + cpuMs(s.proc.pid), 0)
  const m: Measured = {
    ...r,
    harkCpu: (cpu1 - cpu0) / 10 / r.seconds,
    loadCpu: (load1 - load0) / 10 / r.seconds,
    harkUsPerSend: ((cpu1 - cpu0) * 1000) / Math.max(1, r.ok),
    busy: ((m1.busy - m0.busy) / (m1.total - m0.total)) * 100,
  }
  if (stats) {
    m.pgCpu = (pg1 - pg0) / 10 / r.seconds
    m.pgUsPerSend = ((pg1 - pg0) * 1000) / Math.max(1, r.ok)
  }
  if (stats && before) {
    await Bun.sleep(1_100)
    const after = await pgCounters(stats)
    // Counted after the window too: a few of the warm-down's idle flushes land here, so both
    // are upper bounds (the stats reads themselves are two commits).
    m.walSyncs = ((after.walSync - before.walSync) / r.ok) * 1000
    m.commits = (after.commits - before.commits) / r.ok
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
    `${m.perSecond.toFixed(0).padStart(6)} msg/s  p50 ${ms(pct(m.latencies, 50))}  ` +
    `p99 ${ms(pct(m.latencies, 99))}  errors ${m.errors}  hark CPU ${m.harkCpu.toFixed(0)}% ` +
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
        if (BASELINE_SCHEMA > 0) {
          await stats`DELETE FROM schema_version WHERE version > ${BASELINE_SCHEMA}`
          for (const body of olderBodies) await stats.unsafe(body)
        }
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
        `${median(ms_.map((m) => pct(m.latencies, 50)))
          .toFixed(2)
          .padStart(8)} ` +
        `${median(ms_.map((m) => pct(m.latencies, 99)))
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
