// test-also: postgres
// (The SQLite half runs in `npm test`, the Postgres half in test:e2e: scripts/test-parts.ts.)
import type { Database } from 'bun:sqlite'
import { afterEach, beforeAll, beforeEach, describe } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { openDatabase } from '../../src/db/database.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import type { PgTwin } from '../../src/db/pg/twin.ts'
import { searchIndexer } from '../../src/messages/search/store.ts'
import { tempDir } from '../harness.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from '../pg/cluster.ts'

/**
 * The store contract suites (issue 20): one body of tests run against a store on SQLite and
 * its twin on Postgres, each on a fresh database with the schema of the latest migration, so
 * whatever a test asserts holds on both engines. Writes run in a transaction, as the write
 * path runs them; reads outside one, as the services do.
 */
export type EngineName = 'sqlite' | 'postgres'

export interface StoreEngine<S> {
  readonly name: EngineName
  /** Runs `work` on the store in one transaction (committed unless it throws). */
  write<T>(work: (store: PgTwin<S> | S) => T): Promise<Awaited<T>>
  /** Runs `work` on the store outside a transaction. */
  read<T>(work: (store: PgTwin<S> | S) => T): Promise<Awaited<T>>
  /** Puts rows in `table` directly (what other stores would have written). */
  insert(table: string, rows: Record<string, unknown> | Record<string, unknown>[]): Promise<void>
  /** Rows of a query (`?` placeholders on both engines), integers as numbers. */
  rows(query: string, ...params: unknown[]): Promise<Record<string, unknown>[]>
}

export interface StorePair<S> {
  sqlite: (db: Database) => S
  postgres: (sql: SQL) => PgTwin<S>
}

/**
 * One cluster and template for every suite in the process (`bun test` runs the files in one):
 * started by the first Postgres suite, stopped when the process exits (test/pg/cluster.ts).
 */
let cluster: PgCluster | undefined
let template: Promise<void> | undefined
let made = 0

async function pgTemplate(c: PgCluster): Promise<void> {
  const sql = new SQL(await c.database('stores_template'), { max: 1 })
  try {
    await migratePostgres(sql)
  } finally {
    await sql.close()
  }
}

const placeholders = (query: string) => {
  let n = 0
  return query.replace(/\?/g, () => `$${++n}`)
}

/** Postgres' int8 arrives as a string: `rows` leaves values as they come, tests use Number(). */
function sqliteEngine<S>(make: StorePair<S>['sqlite']): StoreEngine<S> & { close(): void } {
  const dir = tempDir('hark-store-')
  const db = openDatabase(join(dir, 'hark.db'))
  db.run('PRAGMA synchronous = OFF') // a throwaway file: no need to survive a power cut
  const store = make(db)
  // Every SQLite writer indexes the messages its transaction noted for search just before its
  // COMMIT (migration 018; the group commit and the direct write path do): so do these.
  const indexNoted = searchIndexer(db)
  // One writer at a time, as SQLite allows and the write path arranges: a transaction's
  // awaits must not let another begin on the same connection.
  let queue: Promise<unknown> = Promise.resolve()
  return {
    name: 'sqlite',
    write<T>(work: (store: PgTwin<S> | S) => T) {
      const next = queue.then(async (): Promise<Awaited<T>> => {
        db.run('BEGIN IMMEDIATE')
        try {
          const value = await work(store)
          indexNoted()
          db.run('COMMIT')
          return value
        } catch (error) {
          db.run('ROLLBACK')
          throw error
        }
      })
      queue = next.catch(() => {})
      return next
    },
    async read<T>(work: (store: PgTwin<S> | S) => T): Promise<Awaited<T>> {
      return await work(store)
    },
    async insert(table, rows) {
      db.transaction(() => {
        for (const row of [rows].flat()) {
          const keys = Object.keys(row)
          db.query(
            `INSERT INTO "${table}" (${keys.map((k) => `"${k}"`).join(', ')}) VALUES (${keys.map(() => '?').join(', ')})`,
          ).run(...(Object.values(row) as never[]))
        }
        indexNoted()
      })()
    },
    async rows(query, ...params) {
      return db.query(query).all(...(params as never[])) as Record<string, unknown>[]
    },
    close() {
      db.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function postgresEngine<S>(
  c: PgCluster,
  make: StorePair<S>['postgres'],
): Promise<StoreEngine<S> & { close(): Promise<void> }> {
  const sql = new SQL(await c.database(`store_${++made}`, 'stores_template'), { max: 4 })
  return {
    name: 'postgres',
    write: <T>(work: (store: PgTwin<S> | S) => T) =>
      sql.begin(async (tx) => await work(make(tx))) as Promise<Awaited<T>>,
    async read<T>(work: (store: PgTwin<S> | S) => T): Promise<Awaited<T>> {
      return await work(make(sql))
    },
    async insert(table, rows) {
      await sql`INSERT INTO ${sql(table)} ${sql([rows].flat())}`
    },
    async rows(query, ...params) {
      const rows = (await sql.unsafe(placeholders(query), params)) as Record<string, unknown>[]
      return rows
    },
    close: () => sql.close({ timeout: 0 }),
  }
}

/**
 * `describe`s `body` once per engine. Each test gets a fresh database (Postgres: a copy of a
 * migrated template, about 50 ms). Postgres is skipped, loudly, where it is missing outside
 * CI (test/pg/cluster.ts).
 */
export function describeStore<S>(
  title: string,
  pair: StorePair<S>,
  body: (engine: () => StoreEngine<S>) => void,
): void {
  // The test runner picks one engine per part (scripts/test.ts: SQLite in `npm test`, Postgres
  // in test:e2e); a plain `bun test` of the file runs both.
  const engines = process.env.HARK_TEST_ENGINES ?? 'sqlite,postgres'
  if (engines.includes('sqlite')) sqliteSuite(title, pair, body)
  if (engines.includes('postgres')) postgresSuite(title, pair, body)
}

function sqliteSuite<S>(
  title: string,
  pair: StorePair<S>,
  body: (engine: () => StoreEngine<S>) => void,
): void {
  describe(`${title} on sqlite`, () => {
    let e: (StoreEngine<S> & { close(): void }) | undefined
    beforeEach(() => {
      e = sqliteEngine(pair.sqlite)
    })
    afterEach(() => e?.close())
    body(() => e as StoreEngine<S>)
  })
}

function postgresSuite<S>(
  title: string,
  pair: StorePair<S>,
  body: (engine: () => StoreEngine<S>) => void,
): void {
  describe.skipIf(skipWithoutPostgres())(`${title} on postgres`, () => {
    let e: (StoreEngine<S> & { close(): Promise<void> }) | undefined
    beforeAll(async () => {
      cluster ??= await startCluster()
      template ??= pgTemplate(cluster)
      await template
    }, 60_000)
    beforeEach(async () => {
      e = await postgresEngine(cluster as PgCluster, pair.postgres)
    })
    afterEach(async () => {
      await e?.close()
    })
    body(() => e as StoreEngine<S>)
  })
}

/** A real ms timestamp, far above 2^31: what the suites stamp rows with. */
export const T = 1_764_000_000_000

/** People with these ids (as the users store would have made them), not owners. */
export async function people(e: StoreEngine<unknown>, ...ids: string[]): Promise<void> {
  for (const id of ids) {
    await e.insert('users', { id, email: `${id}@example.com`, is_owner: 0, created_at: T })
  }
}

/**
 * A person's whole row, every column set and the text not ASCII: what a joined read (a token's
 * or a session's owner) must answer unchanged on both engines.
 */
export const UNICODE_PERSON = {
  id: 'u3',
  email: 'élodie@example.com',
  name: 'Élodie — ünïcode',
  is_owner: 0,
  created_at: 1_764_000_000_003,
  email_verified: 1,
}

/** A channel of `userId`'s (as the channels store would have made it). */
export const channel = (e: StoreEngine<unknown>, id: string, userId: string, label = id) =>
  e.insert('channels', { id, user_id: userId, label, created_at: T, updated_at: T })

/** The promise's value, or 'pending' if it has not settled within `ms` (a writer left waiting). */
export const within = <V>(p: Promise<V>, ms: number): Promise<V | 'pending'> =>
  Promise.race([p, Bun.sleep(ms).then(() => 'pending' as const)])
