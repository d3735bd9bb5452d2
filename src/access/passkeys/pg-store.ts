import type { SQL } from 'bun'
import { bytes, ints, type PgTwin } from '../../server/db/pg/twin.ts'
import type { ChallengeRow, ChallengeStore, PasskeyRow, PasskeyStore } from './store.ts'

const passkey = (r: unknown) =>
  bytes<PasskeyRow>(ints<PasskeyRow>(r, ['counter', 'backed_up', 'created_at', 'last_used_at']), [
    'public_key',
  ])
const challenge = (r: unknown) => ints<ChallengeRow>(r, ['expires_at'])

/** access/passkeys/store.ts on Postgres (see server/db/pg/twin.ts); writes in a transaction. */
export function pgPasskeyStore(sql: SQL): PgTwin<PasskeyStore> {
  return {
    async insert(p) {
      const [made] = await sql`
        INSERT INTO passkeys
          (id, user_id, public_key, counter, transports, device_type, backed_up, name, created_at)
        VALUES (${p.id}, ${p.user_id}, ${p.public_key}, ${p.counter}, ${p.transports},
                ${p.device_type}, ${p.backed_up}, ${p.name}, ${p.created_at})
        RETURNING *`
      return passkey(made)
    },
    async byId(id) {
      const [found] = await sql`SELECT * FROM passkeys WHERE id = ${id}`
      return found ? passkey(found) : undefined
    },
    async byUser(userId) {
      const rows = await sql`SELECT * FROM passkeys WHERE user_id = ${userId}
                             ORDER BY created_at, id`
      return rows.map(passkey)
    },
    async countByUser(userId) {
      const [n] = await sql`SELECT count(*) AS n FROM passkeys WHERE user_id = ${userId}`
      return Number(n?.n ?? 0)
    },
    async recordUse(id, counter, deviceType, backedUp, now) {
      // One conditional UPDATE, as on SQLite: two instances verifying the same assertion at
      // once queue on the row, and the second finds the counter already moved (a replay).
      const [used] = await sql`
        UPDATE passkeys SET counter = ${counter}, device_type = ${deviceType},
          backed_up = ${backedUp ? 1 : 0}, last_used_at = ${now}
        WHERE id = ${id} AND (${counter}::bigint = 0 AND counter = 0 OR counter < ${counter})
        RETURNING *`
      return used ? passkey(used) : undefined
    },
    async rename(id, userId, name) {
      const [renamed] = await sql`
        UPDATE passkeys SET name = ${name} WHERE id = ${id} AND user_id = ${userId} RETURNING *`
      return renamed ? passkey(renamed) : undefined
    },
    async remove(id, userId) {
      return (await sql`DELETE FROM passkeys WHERE id = ${id} AND user_id = ${userId}`).count > 0
    },
    async removeByUser(userId) {
      return (await sql`DELETE FROM passkeys WHERE user_id = ${userId}`).count
    },
  }
}

export function pgChallengeStore(sql: SQL): PgTwin<ChallengeStore> {
  return {
    async insert(c) {
      await sql`
        INSERT INTO challenges (id, purpose, challenge, data, expires_at)
        VALUES (${c.id}, ${c.purpose}, ${c.challenge}, ${c.data}, ${c.expires_at})`
    },
    async take(id) {
      // Single use under races on any instance: a second DELETE waits on the first's row
      // lock, then finds the row gone and returns nothing.
      const [taken] = await sql`DELETE FROM challenges WHERE id = ${id} RETURNING *`
      return taken ? challenge(taken) : undefined
    },
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
