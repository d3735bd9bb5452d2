import type { Database } from 'bun:sqlite'

export interface JoinLinkRow {
  id: string
  hash: Uint8Array
  user_id: string
  channel_id: string | null
  label: string | null
  created_at: number
  expires_at: number
  used_at: number | null
}

export function joinLinkStore(db: Database) {
  const q = {
    insert: db.query<
      JoinLinkRow,
      [string, Uint8Array, string, string | null, string | null, number, number]
    >(
      `INSERT INTO join_links (id, hash, user_id, channel_id, label, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING *`,
    ),
    byHash: db.query<JoinLinkRow, [Uint8Array]>('SELECT * FROM join_links WHERE hash = ?1'),
    use: db.query<null, [string, number]>(
      'UPDATE join_links SET used_at = ?2 WHERE id = ?1 AND used_at IS NULL',
    ),
  }
  return {
    insert: (j: Omit<JoinLinkRow, 'used_at'>) =>
      q.insert.get(
        j.id,
        j.hash,
        j.user_id,
        j.channel_id,
        j.label,
        j.created_at,
        j.expires_at,
      ) as JoinLinkRow,
    byHash: (hash: Uint8Array) => q.byHash.get(hash) ?? undefined,
    /** Marks the link used; false when it already was. */
    use: (id: string, now: number) => q.use.run(id, now).changes === 1,
  }
}

export type JoinLinkStore = ReturnType<typeof joinLinkStore>
