import { Database } from 'bun:sqlite'
import { openDatabase, schemaVersion } from '../../db/database.ts'

/**
 * The SQL of `hark admin backup` and `restore`, and the only SQL in src/cli/admin. The live
 * database is opened as the server opens it, through `openDatabase`. The copies a backup or
 * restore handles (the snapshot, the database read out of an archive) are not: that opener
 * migrates and sets the journal mode, and a copy must be checked as it is, before anything
 * writes to it.
 */

export interface FileRecord {
  id: string
  channel_id: string
  size: number
  sha256: string
}

/** A copy, opened without migrating it; read-only unless `write`. */
function openCopy(path: string, write = false): Database {
  return write
    ? new Database(path, { readwrite: true, create: false })
    : new Database(path, { readonly: true })
}

function using<T>(db: Database, work: (db: Database) => T): T {
  try {
    return work(db)
  } finally {
    db.close()
  }
}

/** Opens a copy for writing and runs `work` on it if it has `table` (an older schema may not). */
function changeTable(path: string, table: string, work: (db: Database) => void): void {
  using(openCopy(path, true), (db) => {
    const found = db
      .query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1")
      .get(table)
    if (found) work(db)
  })
}

/** A consistent copy of the live database at `into`, made inside one read transaction. */
export function snapshotInto(livePath: string, into: string): void {
  using(openDatabase(livePath), (db) => db.query('VACUUM INTO ?').run(into))
}

/** What `PRAGMA integrity_check` finds wrong with a copy (nothing: []), and its schema version. */
export function integrityOf(path: string): { problems: string[]; schema: number } {
  return using(openCopy(path), (db) => {
    const rows = db.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all()
    const problems = rows.map((r) => r.integrity_check).filter((r) => r !== 'ok')
    return { problems, schema: schemaVersion(db) }
  })
}

/** The files a copy records, in the order a backup stores them. */
export function fileRecords(path: string): FileRecord[] {
  return using(openCopy(path), (db) =>
    db
      .query<FileRecord, []>(
        'SELECT id, channel_id, size, sha256 FROM files ORDER BY channel_id, id',
      )
      .all(),
  )
}

/**
 * Erases a copy's server keys (schema 13; an older one has none): a backup never holds what
 * opens the ceremonies and codes it holds (docs/decisions.md, "Server keys"). Each key is
 * overwritten before its row goes, and the rollback journal stays in memory, so no key bytes are
 * left in the copy's free space or in a journal file beside it.
 */
export function dropServerKeys(path: string): void {
  changeTable(path, 'server_keys', (db) => {
    db.run('PRAGMA journal_mode = MEMORY')
    db.transaction(() => {
      db.run('UPDATE server_keys SET key = zeroblob(length(key))')
      db.run('DELETE FROM server_keys')
    })()
  })
}

/** Deletes a copy's push subscriptions (a schema too old to have them has none). */
export function dropSubscriptions(path: string): void {
  changeTable(path, 'push_subscriptions', (db) => {
    db.run('PRAGMA foreign_keys = ON')
    db.run('DELETE FROM push_subscriptions')
  })
}
