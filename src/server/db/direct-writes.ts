import type { Database } from 'bun:sqlite'
import type { WritePath, WriteTx } from '../../core/write-path.ts'

/**
 * The write path of a process that is not the server (`hark admin`, provisioning in tests and
 * benchmarks): each unit is its own immediate transaction, durable when it returns (the
 * connection's `synchronous = FULL`), and there is nobody to wake. The same services run over
 * it as over the server's group commit.
 */
export function directWrites(db: Database): WritePath {
  const tx: WriteTx = { wake() {}, after: (effect) => effect() }
  let writes = 0
  const apply = <T>(unit: (tx: WriteTx) => T): T => {
    const value = db.transaction(() => unit(tx)).immediate()
    writes++
    return value
  }
  return {
    apply,
    stats: () => ({ writes, flushes: writes }),
    run: async (unit) => apply(unit),
    settled: () => undefined,
    flush() {},
    close() {},
  }
}
