// test-needs: postgres
// (Debian's PostgreSQL server (initdb, postgres): an e2e file. See scripts/test-parts.ts.)
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL, type Subprocess } from 'bun'
import { skipWithout } from '../ops/release.ts'

/**
 * A throwaway PostgreSQL cluster for the tests (issue 20), made from Debian's `postgresql`
 * package (scripts/system-deps.sh installs it; Debian's own cluster service is never started).
 * Each cluster lives in its own temp dir: data, log and unix socket, on a free loopback port,
 * trust auth (nothing but this machine's loopback reaches it, and it is gone after the test).
 */
export interface PgCluster {
  /** The cluster's `postgres` database, as the `postgres` superuser. */
  readonly url: string
  /** Its directory in the OS temp dir: data, log, unix socket. Gone once it is stopped. */
  readonly dir: string
  /**
   * Makes a fresh database and returns its URL: each test gets its own schema state. Empty, or
   * a copy of `template` (a database nobody is connected to).
   */
  database(name: string, template?: string): Promise<string>
  /** Stops the server and removes its directory. Safe to call twice. */
  close(): Promise<void>
}

/** Where Debian puts the server binaries: /usr/lib/postgresql/<major>/bin, newest major wins. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const majors = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a))
  return majors[0] ? join(root, majors[0], 'bin') : undefined
}

/**
 * Whether the Postgres tests must be skipped: only outside CI, and loudly (like the other
 * system tools, test/ops/release.ts). In CI a missing postgres fails the tests instead.
 */
export function skipWithoutPostgres(): boolean {
  return skipWithout(() => postgresBin() !== undefined, 'postgresql (initdb, pg_ctl)')
}

/** Each step is bounded: a hung initdb or server must fail the test, not stall the run. */
const STEP_MS = 30_000

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const port = probe.port
  probe.stop(true)
  return port
}

/**
 * `initdb` and `postgres` refuse to run as root: as root, they run as the `postgres` OS user
 * (setpriv execs in place, so the server stays the child of the wrapper that watches it).
 */
function asServerUser(argv: string[]): string[] {
  return process.getuid?.() === 0
    ? ['setpriv', '--reuid=postgres', '--regid=postgres', '--init-groups', '--', ...argv]
    : argv
}

async function run(argv: string[], what: string): Promise<void> {
  const proc = Bun.spawn(asServerUser(argv), {
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
    timeout: STEP_MS,
  })
  const code = await proc.exited
  if (code !== 0) throw new Error(`${what} failed (exit ${code}${proc.signalCode ?? ''})`)
}

/**
 * The server never outlives the test process, however that ends (issue 33: a cluster left
 * by a killed test ran on for hours). `postgres` runs under a small shell that is this
 * process's child, started with a parent-death signal (`setpriv --pdeathsig`: the kernel sends
 * it SIGTERM when this process dies, even by SIGKILL). On SIGTERM the shell stops the server
 * at once (SIGQUIT: immediate shutdown, its backends with it) and removes the cluster's
 * directory. Not `pg_ctl start`: that detaches the server into its own session under PID 1,
 * where nothing would stop it.
 */
const WRAPPER = `dir=$1; shift; pg=
trap 'if [ -n "$pg" ]; then kill -QUIT "$pg" 2>/dev/null; wait "$pg"; fi; rm -rf "$dir"; exit 0' TERM INT HUP
"$@" >"$dir/log" 2>&1 &
pg=$!
wait "$pg"`

/** Every cluster still up, stopped when the process exits even if a test forgot to. */
const live = new Set<{ dir: string; wrapper: Subprocess }>()
process.on('exit', () => {
  for (const c of live) stopNow(c.dir, c.wrapper)
})

/** Asks the wrapper to stop the server and remove the directory (it finishes on its own). */
function stopNow(dir: string, wrapper?: Subprocess): void {
  if (wrapper && wrapper.exitCode === null && wrapper.signalCode === null) wrapper.kill('SIGTERM')
  else rmSync(dir, { recursive: true, force: true })
}

/** Until `postmaster.pid` says ready (what `pg_ctl -w` waits for), or the server has exited. */
async function ready(data: string, wrapper: Subprocess): Promise<boolean> {
  const deadline = Date.now() + STEP_MS
  while (Date.now() < deadline && wrapper.exitCode === null && wrapper.signalCode === null) {
    try {
      const lines = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')
      if (lines[7]?.trim() === 'ready') return true
    } catch {
      // Not written yet.
    }
    await Bun.sleep(20)
  }
  return false
}

/**
 * Starts a cluster; throws if postgres is missing (check `skipWithoutPostgres` first).
 * `durable`: fsync and full_page_writes at their defaults (on), so a COMMIT waits for its WAL
 * flush, for benches (bench/pg-throughput.ts); the tests' clusters skip the syncs.
 */
export async function startCluster(options: { durable?: boolean } = {}): Promise<PgCluster> {
  const bin = postgresBin()
  if (!bin) throw new Error('postgresql is missing: apt-get install -y postgresql (.ci/run does)')
  const dir = mkdtempSync(join(tmpdir(), 'hark-pg-'))
  const data = join(dir, 'data')
  const entry: { dir: string; wrapper?: Subprocess } = { dir }
  live.add(entry as { dir: string; wrapper: Subprocess })
  try {
    if (process.getuid?.() === 0) {
      const uid = Number(Bun.spawnSync(['id', '-u', 'postgres']).stdout.toString().trim())
      const gid = Number(Bun.spawnSync(['id', '-g', 'postgres']).stdout.toString().trim())
      if (!uid) throw new Error('there is no `postgres` OS user to run the test cluster as')
      chownSync(dir, uid, gid)
    }
    // --no-sync and fsync=off: a throwaway cluster need not survive a power cut, and syncing
    // would triple its start time. Trust auth: initdb's pg_hba.conf then trusts local and
    // loopback connections only (listen_addresses keeps it off every other interface).
    await run(
      [
        join(bin, 'initdb'),
        '-D',
        data,
        '-A',
        'trust',
        '-U',
        'postgres',
        '-E',
        'UTF8',
        '--locale=C.UTF-8',
        '--no-sync',
        '--no-instructions',
      ],
      'initdb',
    )
    // The port was free a moment ago; another process may take it first, so try a few.
    let port = 0
    let wrapper: Subprocess | undefined
    for (let attempt = 0; ; attempt++) {
      port = await freePort()
      const server = asServerUser([
        join(bin, 'postgres'),
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        dir,
        '-c',
        'listen_addresses=127.0.0.1',
        ...(options.durable ? [] : ['-c', 'fsync=off', '-c', 'full_page_writes=off']),
      ])
      wrapper = Bun.spawn(
        ['setpriv', '--pdeathsig=TERM', '--', 'sh', '-c', WRAPPER, 'sh', dir, ...server],
        {
          stdin: 'ignore',
          stdout: 'ignore',
          stderr: 'ignore',
        },
      )
      entry.wrapper = wrapper
      if (await ready(data, wrapper)) break
      const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : ''
      // Still running but not ready in time: hung (the catch below stops it). Exited: the
      // port was taken meanwhile, most likely; try another.
      if (wrapper.exitCode === null || attempt >= 2) {
        throw new Error(`postgres did not start:\n${log}`)
      }
    }
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`
    let closed = false
    return {
      url,
      dir,
      async database(name, template) {
        for (const n of [name, template ?? name]) {
          if (!/^[a-z_][a-z0-9_]*$/.test(n)) throw new Error(`bad database name ${n}`)
        }
        const admin = new SQL(url, { max: 1 })
        try {
          await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
        } finally {
          await admin.close()
        }
        return `postgres://postgres@127.0.0.1:${port}/${name}`
      },
      async close() {
        if (closed) return
        closed = true
        live.delete(entry as { dir: string; wrapper: Subprocess })
        stopNow(dir, wrapper)
        let timer: Timer | undefined
        await Promise.race([
          wrapper?.exited,
          new Promise((settle) => {
            timer = setTimeout(settle, STEP_MS)
          }),
        ])
        clearTimeout(timer)
        rmSync(dir, { recursive: true, force: true })
      },
    }
  } catch (error) {
    live.delete(entry as { dir: string; wrapper: Subprocess })
    stopNow(dir, entry.wrapper)
    throw error
  }
}
