import type { Database } from 'bun:sqlite'
import type { SQL } from 'bun'
import { FatalError } from '../../core/errors.ts'
import { storeVapidIn, type VapidKeys } from '../../push/vapid.ts'

/**
 * Copies every record of a SQLite database into an empty Postgres database of the same schema
 * version (`hark admin migrate-to`, issue 20). One read transaction on SQLite (a consistent
 * snapshot even while a server writes) and one transaction on Postgres (a failure leaves it
 * empty), counts compared table by table before the commit.
 *
 * What is not copied as rows: SQLite's own tables, FTS5's virtual table and its shadow tables
 * (Postgres keeps its search index by triggers on `messages`, so it is rebuilt as the messages
 * arrive) and the version record (each engine keeps its own).
 *
 * Not a row on SQLite but one on Postgres: the VAPID key pair (the data directory's vapid.json,
 * Postgres' `vapid_keys`), given as `vapid` and written in the same transaction, so the devices
 * subscribed before the move still accept pushes signed by the instances after it.
 */

export interface CopiedTable {
  table: string
  /** Rows read from SQLite's snapshot. */
  rows: number
  /** Rows Postgres holds after the copy, counted in the same transaction. */
  copied: number
}

/** Reported as its message alone: nothing was copied. */
export class CopyError extends FatalError {}

/** Postgres takes at most 65,535 parameters a statement; a batch stays well under. */
const MAX_PARAMETERS = 30_000
const MAX_BATCH = 1_000

type Row = Record<string, unknown>

/**
 * Rows the migrations themselves put in (001 seeds the change counter at 0): a database holding
 * only these holds no records yet, and the copy puts SQLite's in their place.
 */
const SEEDED: Readonly<Record<string, string>> = { counters: 'value = 0' }

/** The tables holding records, parents before children (foreign keys), then by name. */
export function recordTables(db: Database): string[] {
  const all = db
    .query<{ name: string; sql: string }, []>(
      "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .all()
  const virtual = all.filter((t) => /^CREATE\s+VIRTUAL/i.test(t.sql)).map((t) => t.name)
  const tables = all
    .map((t) => t.name)
    .filter((name) => !virtual.some((v) => name === v || name.startsWith(`${v}_`)))
    .sort()
  const parents = new Map(
    tables.map((t) => [
      t,
      db
        .query<{ table: string }, []>(`PRAGMA foreign_key_list("${t}")`)
        .all()
        .map((fk) => fk.table)
        .filter((p) => p !== t),
    ]),
  )
  const ordered: string[] = []
  const visit = (t: string, path: string[]) => {
    if (ordered.includes(t)) return
    if (path.includes(t))
      throw new CopyError(`foreign keys form a cycle: ${[...path, t].join(' -> ')}`)
    for (const p of parents.get(t) ?? []) visit(p, [...path, t])
    ordered.push(t)
  }
  for (const t of tables) visit(t, [])
  return ordered
}

const sqliteVersion = (db: Database) =>
  db.query<{ user_version: number }, []>('PRAGMA user_version').get()?.user_version ?? 0

/** Rows of a table in batches, read from the open snapshot without holding them all. */
function* batches(db: Database, table: string): Generator<Row[]> {
  const columns = db.query<{ name: string }, []>(`PRAGMA table_info("${table}")`).all().length
  const size = Math.max(1, Math.min(MAX_BATCH, Math.floor(MAX_PARAMETERS / Math.max(columns, 1))))
  let batch: Row[] = []
  for (const row of db.query<Row, []>(`SELECT * FROM "${table}"`).iterate()) {
    batch.push(row)
    if (batch.length === size) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}

/**
 * Copies `db` into `sql`, whose schema must already be at SQLite's version and hold no
 * records. `progress` hears of each table once it is copied; `first` runs inside the SQLite
 * snapshot before any record is copied (the files' bytes go first, so no record the copy
 * commits names bytes that are not there yet). `vapid`, when given, replaces any pair Postgres
 * holds (one an instance made before any record was there, which no device subscribed to).
 */
export async function copyToPostgres(
  db: Database,
  sql: SQL,
  pgVersion: number,
  progress: (t: CopiedTable) => void = () => {},
  first: () => Promise<void> = async () => {},
  vapid?: VapidKeys,
): Promise<CopiedTable[]> {
  const version = sqliteVersion(db)
  if (version !== pgVersion) {
    throw new CopyError(`the SQLite database is at schema ${version}, Postgres at ${pgVersion}`)
  }
  const tables = recordTables(db)
  db.run('BEGIN') // a read transaction: every table is read from one snapshot
  try {
    await first()
    return await sql.begin(async (tx) => {
      await refuseRecords(tx, tables)
      const copied: CopiedTable[] = []
      for (const table of tables) {
        let rows = 0
        for (const batch of batches(db, table)) {
          await tx`INSERT INTO ${tx(table)} ${tx(batch)}`
          rows += batch.length
        }
        await restartIdentities(tx, table)
        const [row] = await tx`SELECT count(*) AS n FROM ${tx(table)}`
        const t = { table, rows, copied: Number(row?.n ?? -1) }
        if (t.copied !== t.rows) {
          throw new CopyError(
            `${table}: ${t.rows} rows read, ${t.copied} in Postgres; nothing kept`,
          )
        }
        copied.push(t)
        progress(t)
      }
      if (vapid) await storeVapidIn(tx, vapid)
      return copied
    })
  } finally {
    db.run('COMMIT')
  }
}

/** Copying into a database that already holds records would merge two histories: refused. */
async function refuseRecords(tx: SQL, tables: string[]): Promise<void> {
  const held: string[] = []
  for (const table of tables) {
    const seeded = SEEDED[table]
    const [row] = seeded
      ? await tx`SELECT EXISTS (SELECT 1 FROM ${tx(table)} WHERE NOT (${tx.unsafe(seeded)})) AS held`
      : await tx`SELECT EXISTS (SELECT 1 FROM ${tx(table)}) AS held`
    if (row?.held) held.push(table)
    else if (seeded) await tx`DELETE FROM ${tx(table)}`
  }
  if (held.length > 0) {
    throw new CopyError(
      `the Postgres database already holds records (in ${held.join(', ')}); migrate-to copies into an empty database only`,
    )
  }
}

/**
 * Rows came with their ids; the identity columns (`messages.rid`, `push_queue.id`,
 * `audit_log.seq`) must go on after the highest, as SQLite's rowid would.
 */
async function restartIdentities(tx: SQL, table: string): Promise<void> {
  const columns = await tx`SELECT column_name FROM information_schema.columns
    WHERE table_schema = current_schema() AND table_name = ${table} AND is_identity = 'YES'`
  for (const { column_name: column } of columns) {
    await tx`SELECT setval(pg_get_serial_sequence(${table}, ${column}), max_id)
             FROM (SELECT max(${tx(column)}) AS max_id FROM ${tx(table)}) m
             WHERE max_id IS NOT NULL`
  }
}
