import type { SQL } from 'bun'
import { every, inserted, type PgTwin, rowOf } from '../../../db/pg/twin.ts'
import { type AuditRow, type AuditStore, GENESIS_HASH } from './store.ts'

const row = rowOf<AuditRow>({ ints: ['seq', 'at'] })

/**
 * The key of the advisory lock that makes appends to the chain one at a time: "audt" in ASCII,
 * as migrate.ts's key spells "hark", so it is recognisable in pg_locks.
 */
const CHAIN_LOCK = 0x61756474

/**
 * asks/audit/store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction.
 * `seq` is an identity column there, handed out at insert.
 */
export function pgAuditStore(sql: SQL): PgTwin<AuditStore> {
  return {
    async lastHash() {
      // An append reads the last hash, then inserts the row chained to it, in one transaction.
      // Under READ COMMITTED two instances appending at once would both read the same last
      // hash and fork the chain (SQLite's one writer makes them queue; see pg migration 009).
      // The transaction-scoped lock queues appenders here until the one before commits; the
      // read after it is a statement of its own, so its snapshot, taken once the lock is held,
      // sees that committed row. Appends are one at a time, so `seq` also follows the chain.
      // (Outside a transaction, a reader's lock is dropped as soon as it is taken.)
      await sql`SELECT pg_advisory_xact_lock(${CHAIN_LOCK}::bigint)`
      const [last] = await sql`SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1`
      return last ? (last.hash as string) : GENESIS_HASH
    },
    insert: (r) => inserted(sql, 'audit_log', r, row),
    byChannel: (channelId, beforeSeq, limit) =>
      every(
        sql`
        SELECT * FROM audit_log WHERE channel_id = ${channelId} AND seq < ${beforeSeq}
        ORDER BY seq DESC LIMIT ${limit}`,
        row,
      ),
    page: (afterSeq, limit) =>
      every(sql`SELECT * FROM audit_log WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`, row),
  }
}
