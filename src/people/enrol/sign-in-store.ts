import type { Database } from 'bun:sqlite'

export interface SignInLinkRow {
  id: string
  hash: Uint8Array
  user_id: string
  created_at: number
  expires_at: number
  used_at: number | null
}

export function signInLinkStore(db: Database) {
  const q = {
    insert: db.query<SignInLinkRow, [string, Uint8Array, string, number, number]>(
      `INSERT INTO sign_in_links (id, hash, user_id, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5) RETURNING *`,
    ),
    byHash: db.query<SignInLinkRow, [Uint8Array]>('SELECT * FROM sign_in_links WHERE hash = ?1'),
    byId: db.query<SignInLinkRow, [string]>('SELECT * FROM sign_in_links WHERE id = ?1'),
    removeForUser: db.query<null, [string]>('DELETE FROM sign_in_links WHERE user_id = ?1'),
    use: db.query<null, [string, number]>(
      'UPDATE sign_in_links SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL AND expires_at > ?2',
    ),
  }
  return {
    insert: (l: Omit<SignInLinkRow, 'used_at'>) =>
      q.insert.get(l.id, l.hash, l.user_id, l.created_at, l.expires_at) as SignInLinkRow,
    byHash: (hash: Uint8Array) => q.byHash.get(hash) ?? undefined,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    /** Every link of the person, used or not: a new link replaces them. */
    removeForUser: (userId: string) => q.removeForUser.run(userId).changes,
    /** Marks a live link used; false when it was used or had expired. */
    use: (id: string, now: number) => q.use.run(id, now).changes === 1,
  }
}

export type SignInLinkStore = ReturnType<typeof signInLinkStore>
