import type { SQL } from 'bun'
import { ints, type PgTwin } from '../../server/db/pg/twin.ts'
import { type AuditRow, type AuditStore, GENESIS_HASH } from './store.ts'

const row = (r: unknown) => ints<AuditRow>(r, ['seq', 'at'])

/**
 * The key of the advisory lock that makes appends to the chain one at a time: "audt" in ASCII,
 * as migrate.ts's key spells "hark", so it is recognisable in pg_locks.
 */
const CHAIN_LOCK = 0x61756474

/**
 * asks/audit/store.ts on Postgres (see server/db/pg/twin.ts); `sql` is a transaction.
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
    async insert(r) {
      const [made] = await sql`
        INSERT INTO audit_log (at, user_id, channel_id, message_id, entry, prev_hash, hash)
        VALUES (${r.at}, ${r.user_id}, ${r.channel_id}, ${r.message_id}, ${r.entry},
                ${r.prev_hash}, ${r.hash})
        RETURNING *`
      return row(made)
    },
    async byChannel(channelId, beforeSeq, limit) {
      const rows = await sql`
        SELECT * FROM audit_log WHERE channel_id = ${channelId} AND seq < ${beforeSeq}
        ORDER BY seq DESC LIMIT ${limit}`
      return rows.map(row)
    },
    async page(afterSeq, limit) {
      const rows = await sql`
        SELECT * FROM audit_log WHERE seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`
      return rows.map(row)
    },
  }
}
