import type { Database } from 'bun:sqlite'
import type { UserRow } from '../access/rows.ts'

// The row is defined by access, the layer below, which reads it with a token or a session.
export type { UserRow }

export function userStore(db: Database) {
  const q = {
    insert: db.query<UserRow, [string, string, string | null, number, number, number]>(
      `INSERT INTO users (id, email, name, is_owner, created_at, email_verified)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING *`,
    ),
    markVerified: db.query<null, [string]>('UPDATE users SET email_verified = 1 WHERE id = ?1'),
    byId: db.query<UserRow, [string]>('SELECT * FROM users WHERE id = ?1'),
    byEmail: db.query<UserRow, [string]>('SELECT * FROM users WHERE email = ?1'),
    hasOwner: db.query<{ n: number }, []>('SELECT count(*) AS n FROM users WHERE is_owner = 1'),
    all: db.query<UserRow, []>('SELECT * FROM users ORDER BY created_at, id'),
    remove: db.query<null, [string]>('DELETE FROM users WHERE id = ?1 AND is_owner = 0'),
  }
  return {
    insert: (
      u: Omit<UserRow, 'is_owner' | 'email_verified'> & {
        is_owner: boolean
        email_verified: boolean
      },
    ) =>
      q.insert.get(
        u.id,
        u.email,
        u.name,
        u.is_owner ? 1 : 0,
        u.created_at,
        u.email_verified ? 1 : 0,
      ) as UserRow,
    markVerified: (id: string): void => {
      q.markVerified.run(id)
    },
    byId: (id: string) => q.byId.get(id) ?? undefined,
    byEmail: (email: string) => q.byEmail.get(email) ?? undefined,
    hasOwner: () => (q.hasOwner.get()?.n ?? 0) > 0,
    all: () => q.all.all(),
    /** Removes a person who is not the owner, with everything they own (cascade). */
    remove: (id: string) => q.remove.run(id).changes > 0,
  }
}

export type UserStore = ReturnType<typeof userStore>

export interface InviteRow {
  id: string
  hash: Uint8Array
  created_by: string
  email: string | null
  created_at: number
  expires_at: number
  used_at: number | null
  used_by: string | null
}

export function inviteStore(db: Database) {
  const q = {
    insert: db.query<InviteRow, [string, Uint8Array, string, string | null, number, number]>(
      `INSERT INTO invites (id, hash, created_by, email, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING *`,
    ),
    byHash: db.query<InviteRow, [Uint8Array]>('SELECT * FROM invites WHERE hash = ?1'),
    byId: db.query<InviteRow, [string]>('SELECT * FROM invites WHERE id = ?1'),
    open: db.query<InviteRow, [number]>(
      'SELECT * FROM invites WHERE used_at IS NULL AND expires_at > +?1 ORDER BY created_at DESC',
    ),
    use: db.query<null, [string, number, string]>(
      'UPDATE invites SET used_at = ?2, used_by = ?3 WHERE id = ?1 AND used_at IS NULL',
    ),
    remove: db.query<null, [string]>('DELETE FROM invites WHERE id = ?1'),
  }
  return {
    insert: (i: Omit<InviteRow, 'used_at' | 'used_by'>) =>
      q.insert.get(i.id, i.hash, i.created_by, i.email, i.created_at, i.expires_at) as InviteRow,
    byHash: (hash: Uint8Array) => q.byHash.get(hash) ?? undefined,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    open: (now: number) => q.open.all(now),
    /** Marks it used; false when someone used it first. */
    use: (id: string, now: number, userId: string) => q.use.run(id, now, userId).changes === 1,
    remove: (id: string) => q.remove.run(id).changes > 0,
  }
}

export type InviteStore = ReturnType<typeof inviteStore>
