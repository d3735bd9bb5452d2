import { Database } from 'bun:sqlite'
import { openStores } from '../../src/server/context.ts'

/**
 * The SQL text of every statement the stores prepare on `db` (`openStores`), as prepared:
 * `Database.prototype.query` is watched while they are made, and restored after. For
 * test/db/statements.test.ts and bench/reprepare.ts.
 */
export function storeStatements(db: Database): Set<string> {
  const prepared = new Set<string>()
  const query = Database.prototype.query
  Database.prototype.query = function capture(this: Database, sql: string) {
    prepared.add(sql)
    return query.call(this, sql)
  } as typeof query
  try {
    openStores(db)
  } finally {
    Database.prototype.query = query
  }
  return prepared
}
