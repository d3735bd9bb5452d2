/**
 * `bench/pg-throughput.ts --baseline-schema N`: an older build of Hark, which knows Postgres
 * schema N only, runs on the bench's newer database. Allowed only while every migration above N
 * is empty on Postgres (18 is: index.ts) or only replaces functions' bodies (20): before the
 * older build's rounds, the versions above N are taken off the database's record and each such
 * function gets back its body of schema N (`olderBodies`); the next contender's start applies
 * the newer ones again.
 */
import type { SQL } from 'bun'
import { pgMigrations } from '../src/db/pg/migrations/index.ts'

/** Throws unless a build of `schema` can run on the newest database this way. */
export function checkBaselineSchema(schema: number, baseline: string | undefined): void {
  const statements = (sql: string) =>
    sql
      .replace(/\$\$[\s\S]*?\$\$/g, '$$$$')
      .replace(/--.*$/gm, '')
      .split(';')
      .map((t) => t.trim())
      .filter(Boolean)
  const emptyOnPg = (sql: string) =>
    statements(sql).every((t) => /^CREATE OR REPLACE FUNCTION /i.test(t) || t === 'SELECT 1')
  const above = pgMigrations.filter((m) => m.version > schema)
  const notEmpty = above.find((m) => !emptyOnPg(m.sql))
  if (!baseline || notEmpty) {
    throw new Error(
      baseline
        ? `--baseline-schema ${schema}: migration ${notEmpty?.version} changes the Postgres schema; the older build cannot run on it`
        : '--baseline-schema needs --baseline PATH',
    )
  }
}

/**
 * The definitions, as of `schema`, of the functions the migrations above it replace: each
 * one's latest `CREATE [OR REPLACE] FUNCTION name(...) ... $$;` at or below it.
 */
export function olderBodies(schema: number): string[] {
  const names = new Set<string>()
  for (const m of pgMigrations.filter((m) => m.version > schema)) {
    for (const [, name] of m.sql.matchAll(/CREATE OR REPLACE FUNCTION (\w+)\(/gi))
      names.add(name as string)
  }
  return [...names].map((name) => {
    const definition = new RegExp(
      `CREATE (?:OR REPLACE )?FUNCTION ${name}\\([\\s\\S]*?\\$\\$[\\s\\S]*?\\$\\$;`,
      'i',
    )
    const older = pgMigrations
      .filter((m) => m.version <= schema)
      .map((m) => definition.exec(m.sql)?.[0])
      .filter((d) => d !== undefined)
      .at(-1)
    if (!older) throw new Error(`--baseline-schema: no definition of ${name} at or below it`)
    return older.replace(/^CREATE (OR REPLACE )?FUNCTION/i, 'CREATE OR REPLACE FUNCTION')
  })
}

/** Takes the database back to `schema` for the older build's round. */
export async function backTo(stats: SQL, schema: number, bodies: readonly string[]): Promise<void> {
  await stats`DELETE FROM schema_version WHERE version > ${schema}`
  for (const body of bodies) await stats.unsafe(body)
}
