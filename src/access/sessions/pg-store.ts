import type { SQL } from 'bun'
import { changed, every, first, inserted, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import { USER_COLUMNS } from '../joined-store.ts'
import { pgUserRow } from '../rows.ts'
import { type PersonColumns, type SessionRow, type SessionStore, withPersonOf } from './store.ts'

const row = rowOf<SessionRow>({
  ints: ['created_at', 'last_seen_at', 'expires_at'],
  bytes: ['hash'],
})

/** access/sessions/store.ts on Postgres (see db/pg/twin.ts); writes in a transaction. */
export function pgSessionStore(sql: SQL): PgTwin<SessionStore> {
  return {
    insert: (s) => inserted(sql, 'sessions', { ...s, last_seen_at: s.created_at }, row),
    withPerson: (hash) =>
      first(
        sql.unsafe(
          `SELECT s.*, ${USER_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id
           WHERE s.hash = $1`,
          [hash],
        ),
        (found) => {
          const { session, user } = withPersonOf(found as PersonColumns)
          return { session: row(session), user: pgUserRow(user) }
        },
      ),
    byUser: (userId) =>
      every(sql`SELECT * FROM sessions WHERE user_id = ${userId} ORDER BY last_seen_at DESC`, row),
    async touch(id, now, expiresAt) {
      await sql`UPDATE sessions SET last_seen_at = ${now}, expires_at = ${expiresAt} WHERE id = ${id}`
    },
    async remove(id, userId) {
      return (await changed(sql`DELETE FROM sessions WHERE id = ${id} AND user_id = ${userId}`)) > 0
    },
    removeAll: (userId) => changed(sql`DELETE FROM sessions WHERE user_id = ${userId}`),
    async removeExpired(now) {
      await sql`DELETE FROM sessions WHERE expires_at <= ${now}`
    },
  }
}
