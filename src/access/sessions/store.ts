import type { Database } from 'bun:sqlite'
import { type Prefixed, USER_COLUMNS, userIn } from '../joined-store.ts'
import type { UserRow } from '../rows.ts'

export interface SessionRow {
  id: string
  hash: Uint8Array
  user_id: string
  user_agent: string | null
  created_at: number
  last_seen_at: number
  expires_at: number
}

/** A session with its person: who a cookie is. */
export interface SessionWithPerson {
  session: SessionRow
  user: UserRow
}

/** A row of `withPerson`: the session's columns and its person's (`user.*`). */
export type PersonColumns = SessionRow & Prefixed<UserRow, 'user'>

/** A row of `withPerson` (both engines) as its two rows (an inner join: the person is there). */
export const withPersonOf = (r: PersonColumns): SessionWithPerson => ({
  session: {
    id: r.id,
    hash: r.hash,
    user_id: r.user_id,
    user_agent: r.user_agent,
    created_at: r.created_at,
    last_seen_at: r.last_seen_at,
    expires_at: r.expires_at,
  },
  user: userIn(r) as UserRow,
})

export function sessionStore(db: Database) {
  const q = {
    insert: db.query<SessionRow, [string, Uint8Array, string, string | null, number, number]>(
      `INSERT INTO sessions (id, hash, user_id, user_agent, created_at, last_seen_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6) RETURNING *`,
    ),
    // An inner join: a session's person always exists (deleting a person deletes their sessions).
    // `+?1`: see tokens/store.ts `withOwner` (a join on a bare parameter is prepared every run).
    withPerson: db.query<PersonColumns, [Uint8Array]>(
      `SELECT s.*, ${USER_COLUMNS}
       FROM sessions s JOIN users u ON u.id = s.user_id
       WHERE s.hash = +?1`,
    ),
    byUser: db.query<SessionRow, [string]>(
      'SELECT * FROM sessions WHERE user_id = +?1 ORDER BY last_seen_at DESC',
    ),
    touch: db.query<null, [string, number, number]>(
      'UPDATE sessions SET last_seen_at = ?2, expires_at = ?3 WHERE id = ?1',
    ),
    remove: db.query<null, [string, string]>('DELETE FROM sessions WHERE id = ?1 AND user_id = ?2'),
    removeAll: db.query<null, [string]>('DELETE FROM sessions WHERE user_id = ?1'),
    removeExpired: db.query<null, [number]>('DELETE FROM sessions WHERE expires_at <= ?1'),
  }
  return {
    insert: (s: Omit<SessionRow, 'last_seen_at'>) =>
      q.insert.get(s.id, s.hash, s.user_id, s.user_agent, s.created_at, s.expires_at) as SessionRow,
    /** The session of this hash with its person (one read: the person guard's, per request). */
    withPerson: (hash: Uint8Array): SessionWithPerson | undefined => {
      const found = q.withPerson.get(hash)
      return found ? withPersonOf(found) : undefined
    },
    byUser: (userId: string) => q.byUser.all(userId),
    touch: (id: string, now: number, expiresAt: number): void => {
      q.touch.run(id, now, expiresAt)
    },
    remove: (id: string, userId: string) => q.remove.run(id, userId).changes > 0,
    removeAll: (userId: string) => q.removeAll.run(userId).changes,
    removeExpired: (now: number): void => {
      q.removeExpired.run(now)
    },
  }
}

export type SessionStore = ReturnType<typeof sessionStore>
