import type { SQL } from 'bun'
import { bytes, ints, type PgTwin } from '../../server/db/pg/twin.ts'
import type { SessionRow, SessionStore } from './store.ts'

const row = (r: unknown) =>
  bytes<SessionRow>(ints<SessionRow>(r, ['created_at', 'last_seen_at', 'expires_at']), ['hash'])

/** access/sessions/store.ts on Postgres (see server/db/pg/twin.ts); writes in a transaction. */
export function pgSessionStore(sql: SQL): PgTwin<SessionStore> {
  return {
    async insert(s) {
      const [made] = await sql`
        INSERT INTO sessions (id, hash, user_id, user_agent, created_at, last_seen_at, expires_at)
        VALUES (${s.id}, ${s.hash}, ${s.user_id}, ${s.user_agent}, ${s.created_at},
                ${s.created_at}, ${s.expires_at})
        RETURNING *`
      return row(made)
    },
    async byHash(hash) {
      const [found] = await sql`SELECT * FROM sessions WHERE hash = ${hash}`
      return found ? row(found) : undefined
    },
    async byUser(userId) {
      const rows = await sql`
        SELECT * FROM sessions WHERE user_id = ${userId} ORDER BY last_seen_at DESC`
      return rows.map(row)
    },
    async touch(id, now, expiresAt) {
      await sql`UPDATE sessions SET last_seen_at = ${now}, expires_at = ${expiresAt} WHERE id = ${id}`
    },
    async remove(id, userId) {
      const gone = await sql`DELETE FROM sessions WHERE id = ${id} AND user_id = ${userId}`
      return gone.count > 0
    },
    async removeAll(userId) {
      return (await sql`DELETE FROM sessions WHERE user_id = ${userId}`).count
    },
    async removeExpired(now) {
      await sql`DELETE FROM sessions WHERE expires_at <= ${now}`
    },
  }
}
