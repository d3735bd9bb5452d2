import type { AsyncStore } from '../async-stores.ts'

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
