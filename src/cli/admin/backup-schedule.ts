import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { UsageError } from '../../core/errors.ts'

/**
 * Backups on a schedule (`hark admin backup --dir DIR --keep N`, run daily by the
 * hark-backup.timer install.sh installs): each named by its UTC time, so they sort by name, and
 * only the newest N kept. Only files of that name are ever removed: a backup made by hand under
 * another name, or the installer's pre-upgrade ones, stay.
 */
const SCHEDULED = /^hark-\d{8}T\d{6}Z\.tar$/

/** `DIR/hark-20261124T031500Z.tar`, for now. */
export function scheduledName(dir: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z')
  return join(dir, `hark-${stamp}.tar`)
}

export function keepCount(raw: string): number {
  const n = Number(raw)
  if (!/^\d+$/.test(raw.trim()) || n < 1 || n > 10_000) {
    throw new UsageError(`--keep must be a whole number from 1 to 10000 (got "${raw}")`)
  }
  return n
}

/** Removes all but the newest `keep` scheduled backups in `dir`; answers what it removed. */
export function pruneBackups(dir: string, keep: number): string[] {
  const old = readdirSync(dir)
    .filter((name) => SCHEDULED.test(name))
    .sort()
    .reverse()
    .slice(keep)
    .map((name) => join(dir, name))
  for (const path of old) rmSync(path, { force: true })
  return old
}
