import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { openDatabase } from '../../src/db/database.ts'
import { openStores } from '../../src/server/context.ts'
import { openPgStores } from '../../src/server/pg/stores.ts'
import { tempDir } from '../harness.ts'

// The compiler holds every twin to its store's methods (PgStores); this holds the running
// objects to the same: every store has a twin under its name, with every operation, and no more.
test('every store on SQLite has a Postgres twin with the same operations', () => {
  const db = openDatabase(join(tempDir('hark-all-stores-'), 'hark.db'))
  // A client never connected: making the twins runs no query.
  const sql = new SQL('postgres://nobody@127.0.0.1:1/none', { max: 1 })
  try {
    const sqlite = openStores(db)
    const postgres = openPgStores(sql)
    const shape = (stores: object) =>
      Object.fromEntries(
        Object.entries(stores).map(([name, s]: [string, object]) => [name, Object.keys(s).sort()]),
      )
    expect(shape(postgres)).toEqual(shape(sqlite))
    expect(Object.keys(sqlite).length).toBeGreaterThanOrEqual(20)
  } finally {
    db.close()
  }
})
