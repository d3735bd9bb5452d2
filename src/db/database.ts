import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, openSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { FatalError } from '../core/errors.ts'
import { latestVersion, migrations } from './migrations/index.ts'

export class SchemaTooNewError extends FatalError {
  constructor(
    readonly found: number,
    readonly known: number,
  ) {
    super(
      `the database has schema version ${found}, newer than this hark understands (${known}); ` +
        'run a newer hark or restore a backup made by this version',
    )
  }
}

/**
 * Opens (creating if needed) the database at `path`, sets the pragmas every connection needs
 * and brings the schema up to date. Refuses a database written by a newer hark.
 */
export function openDatabase(path: string): Database {
  if (path !== ':memory:') privateFiles(path)
  const db = new Database(path, { create: true, strict: true })
  try {
    // WAL lets readers and the admin CLI work while the server writes. FULL makes every
    // acknowledged write durable across power loss, not only across a crash of the process.
    db.run('PRAGMA journal_mode = WAL')
    db.run('PRAGMA synchronous = FULL')
    db.run('PRAGMA busy_timeout = 5000')
    db.run('PRAGMA foreign_keys = ON')
    migrate(db)
  } catch (error) {
    db.close()
    throw error
  }
  return db
}

/**
 * The database holds every message and the server's keys: it is its user's alone (0600),
 * whatever the umask (SQLite creates it 0644 less the umask). SQLite gives the `-wal` and
 * `-shm` files it creates the main file's mode, so creating that one 0600 first covers them;
 * those an older hark left wider are narrowed here, as is the database itself, when they are
 * this user's (another user allowed to open it, root say, leaves them as they are).
 */
function privateFiles(path: string): void {
  closeSync(openSync(path, 'a', 0o600))
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    let stat: ReturnType<typeof statSync>
    try {
      stat = statSync(file)
    } catch {
      continue // not there (yet)
    }
    if ((stat.mode & 0o077) !== 0 && stat.uid === process.getuid?.()) chmodSync(file, 0o600)
  }
}

export function schemaVersion(db: Database): number {
  const row = db.query<{ user_version: number }, []>('PRAGMA user_version').get()
  return row?.user_version ?? 0
}

/** Applies every pending migration in one transaction, tracked by `PRAGMA user_version`. */
export function migrate(db: Database): void {
  const apply = db.transaction(() => {
    // Re-read inside the (immediate) transaction so two processes never both migrate.
    const current = schemaVersion(db)
    if (current > latestVersion) throw new SchemaTooNewError(current, latestVersion)
    for (const m of migrations) {
      if (m.version <= current) continue
      db.run(m.sql)
      db.run(`PRAGMA user_version = ${m.version}`)
    }
  })
  apply.immediate()
}

/** The SQLite file in a data directory. */
export const databasePath = (dataDir: string) => join(dataDir, 'hark.db')
