import type { SQL } from 'bun'
import { changed, every, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import type { ServerKeyRow, ServerKeyStore } from './store.ts'

const row = rowOf<ServerKeyRow>({ ints: ['period', 'created_at'], bytes: ['key'] })

/**
 * access/keys/store.ts on Postgres (see db/pg/twin.ts). Several instances make the
 * day's key at once: `ON CONFLICT DO NOTHING` keeps the first committed, the others' inserts
 * wait on it and then do nothing, and everyone reads that one back.
 */
export function pgServerKeyStore(sql: SQL): PgTwin<ServerKeyStore> {
  return {
    async add(purpose, period, key, now) {
      await sql`
        INSERT INTO server_keys (purpose, period, key, created_at)
        VALUES (${purpose}, ${period}, ${key}, ${now})
        ON CONFLICT (purpose, period) DO NOTHING`
    },
    async ofPeriod(period) {
      const rows = await every(
        sql`SELECT purpose, period, key, created_at FROM server_keys WHERE period = ${period}`,
        row,
      )
      return new Map(rows.map((r) => [r.purpose, r.key]))
    },
    async oldest() {
      const [found] = await sql`SELECT min(period) AS period FROM server_keys`
      return found?.period === null || found?.period === undefined
        ? undefined
        : Number(found.period)
    },
    eraseBefore: (period) =>
      // SQLite overwrites the bytes before deleting the row. Postgres cannot: an UPDATE writes
      // a new row version and leaves the old one, so erasing is the DELETE, and the bytes go
      // from the table's pages when VACUUM (autovacuum) reclaims the dead rows
      // (docs/scaling.md, Status: "Known differences").
      changed(sql`DELETE FROM server_keys WHERE period < ${period}`),
    all: () => every(sql`SELECT * FROM server_keys ORDER BY period, purpose`, row),
  }
}
