import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/database.ts'
import { tempDir } from '../harness.ts'
import { storeStatements } from './store-statements.ts'

/**
 * Statements planned once (docs/decisions.md): SQLite 3.54 plans a statement again at every
 * run when it orders, limits or joins and a bound parameter takes part (bun:sqlite binds at
 * every call), 7-112 µs a run. Written `+?N`, the parameter keeps the plan. bench/reprepare.ts
 * measures it; these tests hold every store statement to the rule, and show the rewrite leaves
 * each plan as it was.
 */
const dir = tempDir('hark-statements-')
const db = openDatabase(join(dir, 'hark.db'))
const prepared = storeStatements(db)
afterAll(() => {
  db.close()
  rmSync(dir, { recursive: true, force: true })
})

const ordersLimitsOrJoins = /\b(ORDER BY|LIMIT|JOIN)\b|\b(max|min)\(/i
const bareParameter = /(?<!\+)\?\d+/

test('the stores prepare their statements (the capture sees them)', () => {
  expect(prepared.size).toBeGreaterThan(100)
})

test('every store statement that orders, limits or joins takes its parameters as +?N', () => {
  const bare = [...prepared]
    .filter((sql) => ordersLimitsOrJoins.test(sql) && bareParameter.test(sql))
    .map((sql) => sql.replace(/\s+/g, ' '))
  expect(bare).toEqual([])
})

test('a parameter written +?N leaves the plan as it was: the same indexes, the same steps', () => {
  const plan = (sql: string) =>
    db
      .query<{ detail: string }, []>(`EXPLAIN QUERY PLAN ${sql}`)
      .all()
      .map((r) => r.detail)
  const rewritten = [...prepared].filter((sql) => sql.includes('+?'))
  expect(rewritten.length).toBeGreaterThan(30)
  for (const sql of rewritten) {
    expect({ sql, plan: plan(sql) }).toEqual({ sql, plan: plan(sql.replace(/\+\?/g, '?')) })
  }
})
