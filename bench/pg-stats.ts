/**
 * What bench/pg-throughput.ts reads around a round: Postgres' CPU (the postmaster and its
 * children, from /proc), the machine's busy share (/proc/stat), and Postgres' own counters of
 * WAL syncs and commits.
 */
import { readdirSync, readFileSync } from 'node:fs'
import type { SQL } from 'bun'
import { cpuMs } from './lib.ts'

/** CPU time of the postmaster and its children (those alive now), in ms. */
export function pgCpuMs(postmaster: number): number {
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
export function machineTicks(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] as string)
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number)
  const total = fields.reduce((a, b) => a + b, 0)
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0)
  return { busy: total - idle, total }
}

export interface PgCounters {
  walSync: number
  commits: number
}

export async function pgCounters(sql: SQL): Promise<PgCounters> {
  const [row] = await sql`SELECT (SELECT wal_sync FROM pg_stat_wal)::float8 AS wal_sync,
    (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database())::float8 AS commits`
  const r = row as { wal_sync: number; commits: number }
  return { walSync: r.wal_sync, commits: r.commits }
}
