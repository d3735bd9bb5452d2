/**
 * Statements SQLite plans again at every run. Bun 1.4.5's SQLite (3.54) re-plans a statement
 * whenever a parameter is bound (every run: bun:sqlite binds at each call) when that parameter
 * is compared or limits rows in a statement that orders its rows (`ORDER BY`, `max()`,
 * `LIMIT`) or joins: the planner consulted the bound value while planning, so a new value
 * expires the plan. The same statement with `+?N` (a no-op on the value: no affinity either
 * way, the index still used, EXPLAIN QUERY PLAN alike) keeps its plan. Measured: 7-112 µs a run
 * against 0.2-5.5 (docs/decisions.md, "Statements planned once").
 *
 * Every statement the stores prepare (captured from `openStores`), run 2,000 times with each
 * parameter bound to 1, as written and with every parameter written `+?N`, in a savepoint
 * rolled back after; prints those the rewrite makes ≥ 3× and ≥ 3 µs faster. Nothing printed
 * but the count: no statement is planned again at every run.
 *
 *   bun bench/reprepare.ts
 */
import type { Statement } from 'bun:sqlite'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openDatabase } from '../src/db/database.ts'
import { storeStatements } from '../test/db/store-statements.ts'
import { tempDataDir } from './lib.ts'

const RUNS = 2000
const dir = tempDataDir('hark-reprepare-')
const db = openDatabase(join(dir, 'hark.db'))
const prepared = storeStatements(db)

// Some rows, so that reads find something to order.
db.run("INSERT INTO users (id, email, created_at) VALUES ('usr_1', 'a@example.com', 1)")
db.run(
  "INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES ('ch_1', 'usr_1', 'x', 1, 1)",
)
const message = db.query(
  `INSERT INTO messages (id, channel_id, seq, sender, body, ask_status, created_at, updated_at)
   VALUES (?1, 'ch_1', ?2, 'agent', '{}', ?3, 1, 1)`,
)
db.transaction(() => {
  for (let i = 1; i <= 3000; i++) message.run(`m${i}`, i, i % 50 === 0 ? 'open' : null)
})()

/** Every parameter written `+?N` (compared, in LIMIT, in VALUES alike). */
const unaryPlus = (sql: string) => sql.replace(/(?<!\+)\?(\d+)/g, '+?$1')

/** µs a run, the best of two rounds; NaN when it cannot be prepared. */
function timed(sql: string, args: number[]): number {
  let statement: Statement
  try {
    statement = db.query(sql)
  } catch {
    return Number.NaN
  }
  let best = Number.POSITIVE_INFINITY
  for (let round = 0; round < 2; round++) {
    db.run('SAVEPOINT survey')
    const started = performance.now()
    for (let i = 0; i < RUNS; i++) {
      try {
        statement.all(...args)
      } catch {
        // A constraint the dummy values break: the run still planned (or not) and stepped.
      }
    }
    best = Math.min(best, ((performance.now() - started) * 1000) / RUNS)
    db.run('ROLLBACK TO survey')
    db.run('RELEASE survey')
  }
  return best
}

const slow: { asWritten: number; rewritten: number; sql: string }[] = []
for (const sql of prepared) {
  const rewritten = unaryPlus(sql)
  if (rewritten === sql) continue
  const parameters = Math.max(...[...sql.matchAll(/\?(\d+)/g)].map((m) => Number(m[1])))
  const args = Array.from({ length: parameters }, () => 1)
  const a = timed(sql, args)
  const b = timed(rewritten, args)
  if (a >= 3 * b && a - b >= 3) slow.push({ asWritten: a, rewritten: b, sql })
}
slow.sort((x, y) => y.asWritten - y.rewritten - (x.asWritten - x.rewritten))
for (const s of slow) {
  const text = s.sql.replace(/\s+/g, ' ').slice(0, 140)
  console.log(`${s.asWritten.toFixed(1)} µs, ${s.rewritten.toFixed(1)} with +?N: ${text}`)
}
console.log(
  `${prepared.size} statements prepared by the stores; ${slow.length} planned again at every run`,
)
db.close()
rmSync(dir, { recursive: true, force: true })
