import type { Database } from 'bun:sqlite'

export interface ChannelRow {
  id: string
  user_id: string
  label: string
  created_at: number
  updated_at: number
}

export function channelStore(db: Database) {
  const q = {
    insert: db.query<ChannelRow, [string, string, string, number]>(
      `INSERT INTO channels (id, user_id, label, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?4) RETURNING *`,
    ),
    byId: db.query<ChannelRow, [string]>('SELECT * FROM channels WHERE id = ?1'),
    byUser: db.query<ChannelRow, [string]>(
      'SELECT * FROM channels WHERE user_id = ?1 ORDER BY created_at, id',
    ),
    rename: db.query<ChannelRow, [string, string, number]>(
      'UPDATE channels SET label = ?2, updated_at = ?3 WHERE id = ?1 RETURNING *',
    ),
  }
  return {
    insert: (id: string, userId: string, label: string, now: number) =>
      q.insert.get(id, userId, label, now) as ChannelRow,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    byUser: (userId: string) => q.byUser.all(userId),
    rename: (id: string, label: string, now: number) => q.rename.get(id, label, now) as ChannelRow,
  }
}

export type ChannelStore = ReturnType<typeof channelStore>
