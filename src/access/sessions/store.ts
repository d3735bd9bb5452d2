import type { Database } from 'bun:sqlite'

export interface SessionRow {
  id: string
  hash: Uint8Array
  user_id: string
  user_agent: string | null
  created_at: number
  last_seen_at: number
  expires_at: number
}

export function sessionStore(db: Database) {
  const q = {
    insert: db.query<SessionRow, [string, Uint8Array, string, string | null, number, number]>(
      `INSERT INTO sessions (id, hash, user_id, user_agent, created_at, last_seen_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6) RETURNING *`,
    ),
    byHash: db.query<SessionRow, [Uint8Array]>('SELECT * FROM sessions WHERE hash = ?1'),
    byUser: db.query<SessionRow, [string]>(
      'SELECT * FROM sessions WHERE user_id = ?1 ORDER BY last_seen_at DESC',
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
    byHash: (hash: Uint8Array) => q.byHash.get(hash) ?? undefined,
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
