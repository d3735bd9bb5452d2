import type { SQL } from 'bun'
import { SchemaTooNewError } from '../database.ts'
import { pgMigrations } from './migrations/index.ts'

/**
 * Brings a Postgres database's schema up to date (issue 20; nothing in the server calls this
 * yet: the stores still run on SQLite only). The Postgres twin of `migrate` in ../database.ts.
 *
 * Several instances may start at once against one database, so each migration runs in its own
 * transaction that first takes a transaction-scoped advisory lock: the instances queue on it,
 * and each re-reads the version under the lock, so every migration is applied exactly once and
 * the others find it done. Transaction-scoped, not session: the lock goes with the commit or
 * rollback, and a connection returned to a pool (or dropped mid-way) never keeps it.
 * One transaction per migration (Postgres' DDL is transactional): a failure leaves the
 * database at the last version that applied whole, and a long upgrade does not hold one lock
 * over every step.
 *
 * `schema_version` records each applied version (the highest is the schema's version), the
 * counterpart of SQLite's `PRAGMA user_version`; the runner makes it, outside the migrations,
 * so the record exists before the first one runs. A database newer than this binary is
 * refused before anything is written.
 */

/** The advisory lock's key: any fixed number; "hark" in ASCII, so it is recognisable in pg_locks. */
export const MIGRATION_LOCK = 0x6861726b

export interface PgMigrationResult {
  /** The version found before this runner started. */
  from: number
  /** The version the database is at now. */
  to: number
  /** The versions this runner applied itself (another instance may have applied the rest). */
  applied: number[]
}

/** The database's schema version: 0 for an empty database (no `schema_version` yet). */
export async function pgSchemaVersion(sql: SQL): Promise<number> {
  const [table] = await sql`SELECT to_regclass('schema_version') IS NOT NULL AS present`
  if (!table?.present) return 0
  const [row] = await sql`SELECT coalesce(max(version), 0) AS version FROM schema_version`
  // Bun hands int8 back as a string; version is int4, but Number() keeps that from mattering.
  return Number(row?.version ?? 0)
}

/**
 * Applies every pending migration, one transaction each, under the advisory lock. Throws
 * `SchemaTooNewError` for a database written by a newer hark.
 */
export async function migratePostgres(
  sql: SQL,
  migrations: readonly { version: number; sql: string }[] = pgMigrations,
): Promise<PgMigrationResult> {
  const latest = migrations.at(-1)?.version ?? 0
  const applied: number[] = []
  let from: number | undefined
  for (;;) {
    const step = await sql.begin(async (tx) => {
      await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`)
      // Made under the lock: two instances never race to create it.
      await tx.unsafe(
        `CREATE TABLE IF NOT EXISTS schema_version (
           version     INTEGER PRIMARY KEY,
           applied_at  BIGINT NOT NULL
         )`,
      )
      const current = await pgSchemaVersion(tx)
      if (current > latest) throw new SchemaTooNewError(current, latest)
      const next = migrations.find((m) => m.version > current)
      if (next) {
        // Without parameters, unsafe() sends the whole file as one simple query: every
        // statement of it runs, in this transaction.
        await tx.unsafe(next.sql)
        await tx`INSERT INTO schema_version (version, applied_at)
                 VALUES (${next.version}, ${Date.now()})`
      }
      return { current, next: next?.version }
    })
    from ??= step.current
    if (step.next === undefined) return { from, to: step.current, applied }
    applied.push(step.next)
  }
}
