import type { SQL } from 'bun'
import type { AsyncStore } from '../../core/context.ts'

/**
 * What a store's Postgres twin is (issue 20): the same operations as its SQLite store, each
 * answering a promise of the same value, so a service written against the async interface
 * runs on either engine (a SQLite store's plain value can be awaited like a promise). The
 * contract suites in test/stores/ run each store and its twin through the same tests.
 *
 * A twin is made over a transaction (`TransactionSQL`): its writes run inside the write path's
 * transaction as SQLite's run inside a unit, and an operation of several statements (a row
 * locked, then counted) is atomic only there.
 */
export type PgTwin<S> = AsyncStore<S>

/**
 * Bun hands Postgres' int8 back as a string; these columns of `row` become numbers again (every
 * value Hark stores is far below 2^53: ms timestamps, counters, sizes).
 */
export function ints<T>(row: unknown, columns: readonly (keyof T & string)[]): T {
  const out = row as Record<string, unknown>
  for (const c of columns) {
    const v = out[c]
    if (typeof v === 'string' || typeof v === 'bigint') out[c] = Number(v)
  }
  return out as T
}

/**
 * Bun hands bytea back as a Buffer; SQLite's stores answer plain Uint8Arrays (hashes, keys).
 * These columns of `row` become plain Uint8Arrays, so a twin's rows equal its store's.
 */
export function bytes<T>(row: unknown, columns: readonly (keyof T & string)[]): T {
  const out = row as Record<string, unknown>
  for (const c of columns) {
    const v = out[c]
    if (v instanceof Uint8Array && v.constructor !== Uint8Array) {
      out[c] = new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
    }
  }
  return out as T
}

/**
 * A twin's row converter, made once per row type: the int8 columns become numbers (`ints`),
 * then the bytea columns plain Uint8Arrays (`bytes`).
 */
export function rowOf<T>(columns: {
  ints?: readonly (keyof T & string)[]
  bytes?: readonly (keyof T & string)[]
}): (row: unknown) => T {
  return (row) => bytes<T>(ints<T>(row, columns.ints ?? []), columns.bytes ?? [])
}

/** A statement's rows: what `sql` answers (`count` is how many rows it changed). */
export type Rows = PromiseLike<unknown[] & { count: number }>

/** The first row a statement answers, converted, or undefined when it answers none. */
export async function first<T>(query: Rows, as: (row: unknown) => T): Promise<T | undefined> {
  const [found] = await query
  return found === undefined ? undefined : as(found)
}

/** The row a statement always answers (an INSERT or an UPDATE by key, `RETURNING *`), converted. */
export async function one<T>(query: Rows, as: (row: unknown) => T): Promise<T> {
  const [found] = await query
  if (found === undefined) throw new Error('the statement answered no row')
  return as(found)
}

/**
 * `INSERT INTO table (the keys of values) VALUES (their values) RETURNING *`, converted. The
 * keys are the columns, so `values` is the row as the service made it, plus any column the
 * store fills itself (SQLite's stores name theirs in the statement; Bun's helper quotes them).
 */
export function inserted<T>(
  sql: SQL,
  table: string,
  values: object,
  as: (row: unknown) => T,
): Promise<T> {
  const row = sql(values as Record<string, unknown>)
  return one(sql`INSERT INTO ${sql(table)} ${row} RETURNING *`, as)
}

/** Every row a statement answers, converted. */
export async function every<T>(query: Rows, as: (row: unknown) => T): Promise<T[]> {
  return (await query).map((row) => as(row))
}

/** How many rows a statement changed (inserted, updated or deleted). */
export async function changed(query: Rows): Promise<number> {
  return (await query).count
}

/** A `SELECT count(*) AS n` statement's count (int8, so a string until made a number). */
export async function counted(query: Rows): Promise<number> {
  const [found] = await query
  return Number((found as { n?: unknown } | undefined)?.n ?? 0)
}
