import type { SQL } from 'bun'
import { first, inserted, type PgTwin, rowOf } from '../../../db/pg/twin.ts'
import type { SecretRow, SecretStore } from './store.ts'

const row = rowOf<SecretRow>({ ints: ['created_at', 'updated_at'] })

/** asks/secrets/store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction. */
export function pgSecretStore(sql: SQL): PgTwin<SecretStore> {
  return {
    insert: (s) =>
      inserted(sql, 'secret_requests', { ...s, status: 'pending', updated_at: s.created_at }, row),
    byId: (id) => first(sql`SELECT * FROM secret_requests WHERE id = ${id}`, row),
    setStatus: (id, from, status, ciphertext, now, proof = null) =>
      // Two instances moving one request at once (two reads of a fulfilled secret): the second
      // UPDATE waits for the first's row lock, then re-checks `status = from` on the committed
      // row (READ COMMITTED) and matches nothing, so the ciphertext is handed out once.
      first(
        sql`
        UPDATE secret_requests SET status = ${status}, ciphertext = ${ciphertext},
          updated_at = ${now}, proof = ${proof}
        WHERE id = ${id} AND status = ${from}
        RETURNING *`,
        row,
      ),
  }
}
