import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SQL } from 'bun'
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

/** `initdb` and `pg_ctl` refuse to run as root: as root, they run as the `postgres` OS user. */
function asServerUser(argv: string[]): string[] {
  return process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--', ...argv] : argv
}

async function run(argv: string[], what: string): Promise<void> {
  // stdout/stderr to files, not pipes: `pg_ctl start` leaves the postmaster running, and a
  // postmaster holding our pipe open would keep a reader waiting for EOF forever.
  const proc = Bun.spawn(asServerUser(argv), {
    stdin: 'ignore',
    stdout: 'ignore',
    stderr: 'ignore',
    timeout: STEP_MS,
  })
  const code = await proc.exited
  if (code !== 0) throw new Error(`${what} failed (exit ${code}${proc.signalCode ?? ''})`)
}

/** Every cluster still up, stopped when the process exits even if a test forgot to. */
const live = new Set<{ dir: string; data: string }>()
process.on('exit', () => {
  for (const c of live) stopNow(c.dir, c.data)
})

/** Stops the postmaster at once (SIGQUIT: immediate shutdown) and removes the directory. */
function stopNow(dir: string, data: string): void {
  try {
    const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
    if (pid > 0) process.kill(pid, 'SIGQUIT')
  } catch {
    // Not running (never started, or already stopped).
  }
  rmSync(dir, { recursive: true, force: true })
}

/** Starts a cluster; throws if postgres is missing (check `skipWithoutPostgres` first). */
export async function startCluster(): Promise<PgCluster> {
  const bin = postgresBin()
  if (!bin) throw new Error('postgresql is missing: apt-get install -y postgresql (.ci/run does)')
  const dir = mkdtempSync(join(tmpdir(), 'hark-pg-'))
  const data = join(dir, 'data')
  const entry = { dir, data }
  live.add(entry)
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
    for (let attempt = 0; ; attempt++) {
      port = await freePort()
      const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`
      try {
        await run(
          [join(bin, 'pg_ctl'), '-D', data, '-l', join(dir, 'log'), '-w', '-o', options, 'start'],
          'pg_ctl start',
        )
        break
      } catch (error) {
        if (attempt >= 2) {
          const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : ''
          throw new Error(`${(error as Error).message}\n${log}`)
        }
      }
    }
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`
    let closed = false
    return {
      url,
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
        live.delete(entry)
        try {
          await run(
            [join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop'],
            'pg_ctl stop',
          )
        } finally {
          stopNow(dir, data)
        }
      },
    }
  } catch (error) {
    live.delete(entry)
    stopNow(dir, data)
    throw error
  }
}
