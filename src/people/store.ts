import type { Database } from 'bun:sqlite'
import type { TokenKind } from '../server/ids.ts'

export interface UserRow {
  id: string
  email: string
  name: string | null
  is_owner: number
  created_at: number
}

export interface TokenRow {
  id: string
  kind: TokenKind
  hash: Uint8Array
  user_id: string
  channel_id: string | null
  label: string | null
  created_at: number
  last_used_at: number | null
  revoked_at: number | null
}

export function userStore(db: Database) {
  const q = {
    insert: db.query<UserRow, [string, string, string | null, number, number]>(
      `INSERT INTO users (id, email, name, is_owner, created_at) VALUES (?1, ?2, ?3, ?4, ?5)
       RETURNING *`,
    ),
    byId: db.query<UserRow, [string]>('SELECT * FROM users WHERE id = ?1'),
    byEmail: db.query<UserRow, [string]>('SELECT * FROM users WHERE email = ?1'),
    hasOwner: db.query<{ n: number }, []>('SELECT count(*) AS n FROM users WHERE is_owner = 1'),
  }
  return {
    insert: (u: Omit<UserRow, 'is_owner'> & { is_owner: boolean }) =>
      q.insert.get(u.id, u.email, u.name, u.is_owner ? 1 : 0, u.created_at) as UserRow,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    byEmail: (email: string) => q.byEmail.get(email) ?? undefined,
    hasOwner: () => (q.hasOwner.get()?.n ?? 0) > 0,
  }
}

export function tokenStore(db: Database) {
  const q = {
    insert: db.query<
      TokenRow,
      [string, string, Uint8Array, string, string | null, string | null, number]
    >(
      `INSERT INTO tokens (id, kind, hash, user_id, channel_id, label, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING *`,
    ),
    byHash: db.query<TokenRow, [Uint8Array]>('SELECT * FROM tokens WHERE hash = ?1'),
    touch: db.query<null, [string, number]>('UPDATE tokens SET last_used_at = ?2 WHERE id = ?1'),
  }
  return {
    insert: (t: Omit<TokenRow, 'last_used_at' | 'revoked_at'>) =>
      q.insert.get(
        t.id,
        t.kind,
        t.hash,
        t.user_id,
        t.channel_id,
        t.label,
        t.created_at,
      ) as TokenRow,
    byHash: (hash: Uint8Array) => q.byHash.get(hash) ?? undefined,
    touch: (id: string, now: number) => q.touch.run(id, now),
  }
}

export type UserStore = ReturnType<typeof userStore>
export type TokenStore = ReturnType<typeof tokenStore>
