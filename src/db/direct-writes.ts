import type { Database } from 'bun:sqlite'
import type { Unit, WritePath } from '../core/write-path.ts'
import { UnitQueue } from './units.ts'

/**
 * The write path of a process that is not the server (`hark admin`, provisioning in tests and
 * benchmarks): each unit is its own immediate transaction, durable when it returns (the
 * connection's `synchronous = FULL`), and there is nobody to wake: its effects run at once.
 * Units queue one at a time as on the server (`UnitQueue`), so the same async services run
 * over it as over the server's group commit.
 */
export function directWrites<S>(
  db: Database,
  store: S,
  /** Run in each transaction just before its COMMIT (the search index's catch-up). */
  beforeCommit: () => void = () => {},
): WritePath<S> {
  const units = new UnitQueue(db, store)
  let writes = 0
  const alone = async <T>(unit: Unit<S, T>): Promise<T> => {
    const tx = units.effects()
    db.query('BEGIN IMMEDIATE').run()
    let value: T
    try {
      value = await units.savepoint(unit, tx)
      beforeCommit()
      db.query('COMMIT').run()
    } catch (error) {
      if (db.inTransaction) db.query('ROLLBACK').run()
      throw error
    }
    writes++
    for (const effect of tx.effects) effect()
    return value
  }
  const apply = <T>(unit: Unit<S, T>): Promise<T> => {
    const parent = units.current()
    if (parent) return units.nested(parent, unit)
    return units.enqueue(() => alone(unit))
  }
  return {
    apply,
    run: apply,
    stats: () => ({ writes, flushes: writes }),
    // Each unit commits with SQLite's own sync, and fails alone if that fails.
    failure: () => undefined,
    settled: () => (units.pending > 0 ? units.drained().then(() => {}) : undefined),
    flush: async () => {
      await units.drained()
    },
    close: async () => {
      await units.drained()
    },
    reactions: units.reactions,
  }
}
