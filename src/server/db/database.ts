import { Database } from 'bun:sqlite'
import { FatalError } from '../../core/errors.ts'
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
