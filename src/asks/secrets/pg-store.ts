import type { SQL } from 'bun'
import { ints, type PgTwin } from '../../server/db/pg/twin.ts'
import type { SecretRow, SecretStore } from './store.ts'

const row = (r: unknown) => ints<SecretRow>(r, ['created_at', 'updated_at'])

/** asks/secrets/store.ts on Postgres (see server/db/pg/twin.ts); `sql` is a transaction. */
export function pgSecretStore(sql: SQL): PgTwin<SecretStore> {
  return {
    async insert(s) {
      const [made] = await sql`
        INSERT INTO secret_requests (id, channel_id, message_id, name, description, public_key,
          fingerprint, status, created_at, updated_at)
        VALUES (${s.id}, ${s.channel_id}, ${s.message_id}, ${s.name}, ${s.description},
                ${s.public_key}, ${s.fingerprint}, 'pending', ${s.created_at}, ${s.created_at})
        RETURNING *`
      return row(made)
    },
    async byId(id) {
      const [found] = await sql`SELECT * FROM secret_requests WHERE id = ${id}`
      return found ? row(found) : undefined
    },
    async setStatus(id, from, status, ciphertext, now) {
      // Two instances moving one request at once (two reads of a fulfilled secret): the second
      // UPDATE waits for the first's row lock, then re-checks `status = from` on the committed
      // row (READ COMMITTED) and matches nothing, so the ciphertext is handed out once.
      const [moved] = await sql`
        UPDATE secret_requests SET status = ${status}, ciphertext = ${ciphertext},
          updated_at = ${now}
        WHERE id = ${id} AND status = ${from}
        RETURNING *`
      return moved ? row(moved) : undefined
    },
  }
}
