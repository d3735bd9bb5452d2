import type { SQL } from 'bun'
import { changed, first, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import type { IdempotencyStore, KeyRow } from './store.ts'

const row = rowOf<KeyRow>({ ints: ['status', 'created_at'] })

/** access/idempotency/store.ts on Postgres (see db/pg/twin.ts); writes in a transaction. */
export function pgIdempotencyStore(sql: SQL): PgTwin<IdempotencyStore> {
  return {
    find: (channelId, key, cutoff) =>
      first(
        sql`
        SELECT * FROM idempotency_keys
        WHERE channel_id = ${channelId} AND key = ${key} AND created_at > ${cutoff}`,
        row,
      ),
    async claim(k, cutoff) {
      // As on SQLite: a live row keeps the key. Two instances claiming at once: the second
      // insert waits on the first's uncommitted row, then takes the conflict path and finds
      // the row live, so exactly one keeps it.
      const taken = sql`
        INSERT INTO idempotency_keys (channel_id, key, request_hash, status, response, created_at)
        VALUES (${k.channel_id}, ${k.key}, ${k.request_hash}, ${k.status}, ${k.response},
                ${k.created_at})
        ON CONFLICT (channel_id, key) DO UPDATE SET
          request_hash = excluded.request_hash, status = excluded.status,
          response = excluded.response, created_at = excluded.created_at
        WHERE idempotency_keys.created_at <= ${cutoff}`
      return (await changed(taken)) > 0
    },
    sweep: (cutoff) => changed(sql`DELETE FROM idempotency_keys WHERE created_at <= ${cutoff}`),
  }
}
