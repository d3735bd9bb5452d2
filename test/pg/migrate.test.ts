import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { SchemaTooNewError } from '../../src/db/database.ts'
import { latestVersion } from '../../src/db/migrations/index.ts'
import { migratePostgres, pgSchemaVersion } from '../../src/db/pg/migrate.ts'
import { pgLatestVersion, pgMigrations } from '../../src/db/pg/migrations/index.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// The Postgres schema's runner (issue 20) against a real throwaway cluster: one cluster for the
// file, one fresh database per test.
const skip = skipWithoutPostgres()

describe.skipIf(skip)('postgres migrations', () => {
  let cluster: PgCluster
  const clients: SQL[] = []
  const connect = async (db: string) => {
    const sql = new SQL(await cluster.database(db), { max: 2 })
    clients.push(sql)
    return sql
  }

  beforeAll(async () => {
    const started = performance.now()
    cluster = await startCluster()
    console.log(`postgres test cluster up in ${Math.round(performance.now() - started)} ms`)
  }, 60_000)
  afterAll(async () => {
    for (const c of clients) await c.close({ timeout: 0 })
    await cluster?.close()
  }, 60_000)

  test('one version line: Postgres has a migration for every SQLite one', () => {
    expect(pgMigrations.map((m) => m.version)).toEqual(
      Array.from({ length: latestVersion }, (_, i) => i + 1),
    )
    expect(pgLatestVersion).toBe(latestVersion)
  })

  test('apply to an empty database, once; a second run finds nothing to do', async () => {
    const sql = await connect('fresh')
    expect(await pgSchemaVersion(sql)).toBe(0)
    const first = await migratePostgres(sql)
    expect(first).toEqual({
      from: 0,
      to: pgLatestVersion,
      applied: pgMigrations.map((m) => m.version),
    })
    expect(await pgSchemaVersion(sql)).toBe(pgLatestVersion)
    expect(await migratePostgres(sql)).toEqual({
      from: pgLatestVersion,
      to: pgLatestVersion,
      applied: [],
    })
    const rows = await sql`SELECT version FROM schema_version ORDER BY version`
    expect(rows.map((r: { version: number }) => r.version)).toEqual(
      pgMigrations.map((m) => m.version),
    )
    // The seed row of 001 is there exactly once (each migration ran once).
    const [counter] = await sql`SELECT count(*) AS n FROM counters WHERE name = 'change_seq'`
    expect(Number(counter.n)).toBe(1)
  })

  test('two instances starting together apply each migration exactly once', async () => {
    const url = await cluster.database('raced')
    // Two separate clients (separate connections, as two instances would have).
    const a = new SQL(url, { max: 1 })
    const b = new SQL(url, { max: 1 })
    clients.push(a, b)
    const [ra, rb] = await Promise.all([migratePostgres(a), migratePostgres(b)])
    // Between them every version was applied, none twice.
    const all = [...ra.applied, ...rb.applied].sort((x, y) => x - y)
    expect(all).toEqual(pgMigrations.map((m) => m.version))
    expect(ra.to).toBe(pgLatestVersion)
    expect(rb.to).toBe(pgLatestVersion)
    const [n] = await a`SELECT count(*) AS n FROM schema_version`
    expect(Number(n.n)).toBe(pgMigrations.length)
  })

  test('a database newer than this binary is refused, untouched', async () => {
    const sql = await connect('newer')
    await migratePostgres(sql)
    await sql`INSERT INTO schema_version (version, applied_at) VALUES (${pgLatestVersion + 1}, 0)`
    const error = await migratePostgres(sql).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(SchemaTooNewError)
    expect(error).toMatchObject({ found: pgLatestVersion + 1, known: pgLatestVersion })
    expect(await pgSchemaVersion(sql)).toBe(pgLatestVersion + 1)
  })

  test('a failing migration is rolled back whole; the ones before it stay', async () => {
    const sql = await connect('broken')
    const broken = [
      ...pgMigrations.slice(0, 2),
      { version: 3, sql: 'CREATE TABLE half_done (a INTEGER); SELECT 1 / 0;' },
    ]
    await expect(migratePostgres(sql, broken)).rejects.toThrow(/division by zero/)
    expect(await pgSchemaVersion(sql)).toBe(2)
    const [t] = await sql`SELECT to_regclass('half_done') IS NULL AS gone`
    expect(t.gone).toBe(true)
    // And the real migrations carry on from there.
    expect((await migratePostgres(sql)).from).toBe(2)
    expect(await pgSchemaVersion(sql)).toBe(pgLatestVersion)
  })
})
