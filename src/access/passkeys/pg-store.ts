import type { SQL } from 'bun'
import { changed, counted, every, first, inserted, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import type { ChallengeRow, ChallengeStore, PasskeyRow, PasskeyStore } from './store.ts'

const passkey = rowOf<PasskeyRow>({
  ints: ['counter', 'backed_up', 'created_at', 'last_used_at'],
  bytes: ['public_key'],
})
const challenge = rowOf<ChallengeRow>({ ints: ['expires_at'] })

/** access/passkeys/store.ts on Postgres (see db/pg/twin.ts); writes in a transaction. */
export function pgPasskeyStore(sql: SQL): PgTwin<PasskeyStore> {
  return {
    insert: (p) => inserted(sql, 'passkeys', p, passkey),
    byId: (id) => first(sql`SELECT * FROM passkeys WHERE id = ${id}`, passkey),
    byUser: (userId) =>
      every(sql`SELECT * FROM passkeys WHERE user_id = ${userId} ORDER BY created_at, id`, passkey),
    countByUser: (userId) =>
      counted(sql`SELECT count(*) AS n FROM passkeys WHERE user_id = ${userId}`),
    recordUse: (id, counter, deviceType, backedUp, now) =>
      // One conditional UPDATE, as on SQLite: two instances verifying the same assertion at
      // once queue on the row, and the second finds the counter already moved (a replay).
      first(
        sql`
        UPDATE passkeys SET counter = ${counter}, device_type = ${deviceType},
          backed_up = ${backedUp ? 1 : 0}, last_used_at = ${now}
        WHERE id = ${id} AND (${counter}::bigint = 0 AND counter = 0 OR counter < ${counter})
        RETURNING *`,
        passkey,
      ),
    rename: (id, userId, name) =>
      first(
        sql`UPDATE passkeys SET name = ${name} WHERE id = ${id} AND user_id = ${userId} RETURNING *`,
        passkey,
      ),
    async remove(id, userId) {
      return (await changed(sql`DELETE FROM passkeys WHERE id = ${id} AND user_id = ${userId}`)) > 0
    },
    removeByUser: (userId) => changed(sql`DELETE FROM passkeys WHERE user_id = ${userId}`),
  }
}

export function pgChallengeStore(sql: SQL): PgTwin<ChallengeStore> {
  return {
    async insert(c) {
      await sql`
        INSERT INTO challenges (id, purpose, challenge, data, expires_at)
        VALUES (${c.id}, ${c.purpose}, ${c.challenge}, ${c.data}, ${c.expires_at})`
    },
    take: (id) =>
      // Single use under races on any instance: a second DELETE waits on the first's row
      // lock, then finds the row gone and returns nothing.
      first(sql`DELETE FROM challenges WHERE id = ${id} RETURNING *`, challenge),
    async removeExpired(now) {
      await sql`DELETE FROM challenges WHERE expires_at <= ${now}`
    },
    async pendingAnonymous(now) {
      const [row] = await sql`
        SELECT count(*) AS n, min(expires_at) AS first FROM challenges
        WHERE purpose IN ('register', 'login') AND expires_at > ${now}`
      return {
        count: Number(row?.n ?? 0),
        firstExpiry:
          row?.first === null || row?.first === undefined ? undefined : Number(row.first),
      }
    },
  }
}
