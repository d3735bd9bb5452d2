import type { Database } from 'bun:sqlite'
import type { ChannelRow } from '../access/rows.ts'

// The row is defined by access, the layer below, which reads it with an agent's token.
export type { ChannelRow }

export function channelStore(db: Database) {
  const q = {
    // Only while the person has fewer than ?5 channels: the check and the insert are one step.
    insert: db.query<ChannelRow, [string, string, string, number, number]>(
      `INSERT INTO channels (id, user_id, label, created_at, updated_at)
       SELECT ?1, ?2, ?3, ?4, ?4 WHERE (SELECT count(*) FROM channels WHERE user_id = ?2) < ?5
       RETURNING *`,
    ),
    byId: db.query<ChannelRow, [string]>('SELECT * FROM channels WHERE id = ?1'),
    byUser: db.query<ChannelRow, [string]>(
      'SELECT * FROM channels WHERE user_id = +?1 ORDER BY created_at, id',
    ),
    rename: db.query<ChannelRow, [string, string, number]>(
      'UPDATE channels SET label = ?2, updated_at = ?3 WHERE id = ?1 RETURNING *',
    ),
    remove: db.query<null, [string]>('DELETE FROM channels WHERE id = ?1'),
    lastRid: db.query<{ rid: number }, [string]>(
      `SELECT max(rid) AS rid FROM messages
       WHERE channel_id = +?1 AND deleted_at IS NULL AND pin_key IS NULL`,
    ),
    markRead: db.query<null, [string, number]>(
      'UPDATE channels SET read_rid = max(read_rid, +?2) WHERE id = +?1',
    ),
    // Counted up to 1000: the app shows "999+" beyond, and the count stays cheap. The sender
    // is checked on the row (migration 019: no index by sender for every send to write).
    unread: db.query<{ n: number }, [string, number]>(
      `SELECT count(*) AS n FROM (SELECT 1 FROM messages INDEXED BY messages_live
         WHERE channel_id = +?1 AND sender = 'agent' AND rid > +?2
           AND deleted_at IS NULL AND pin_key IS NULL LIMIT 1000)`,
    ),
  }
  return {
    /** The new channel, or undefined when the person already has `max` channels. */
    insert: (id: string, userId: string, label: string, now: number, max: number) =>
      q.insert.get(id, userId, label, now, max) ?? undefined,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    byUser: (userId: string) => q.byUser.all(userId),
    rename: (id: string, label: string, now: number) => q.rename.get(id, label, now) as ChannelRow,
    remove: (id: string): void => {
      q.remove.run(id)
    },
    lastRid: (id: string) => q.lastRid.get(id)?.rid ?? 0,
    markRead: (id: string, rid: number): void => {
      q.markRead.run(id, rid)
    },
    unread: (id: string, afterRid: number) => q.unread.get(id, afterRid)?.n ?? 0,
  }
}

export type ChannelStore = ReturnType<typeof channelStore>
