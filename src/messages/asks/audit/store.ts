import type { Database } from 'bun:sqlite'

/** A row of `audit_log` (migration 009): one decision, chained to the one before. */
export interface AuditRow {
  seq: number
  at: number
  user_id: string
  channel_id: string
  message_id: string
  /** Canonical JSON of the decision (src/messages/asks/audit/service.ts). */
  entry: string
  prev_hash: string
  hash: string
}

export const GENESIS_HASH = '0'.repeat(64)

export function auditStore(db: Database) {
  const q = {
    last: db.query<{ hash: string }, []>('SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1'),
    insert: db.query<AuditRow, [number, string, string, string, string, string, string]>(
      `INSERT INTO audit_log (at, user_id, channel_id, message_id, entry, prev_hash, hash)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING *`,
    ),
    byChannel: db.query<AuditRow, [string, number, number]>(
      `SELECT * FROM audit_log WHERE channel_id = +?1 AND seq < +?2 ORDER BY seq DESC LIMIT +?3`,
    ),
    page: db.query<AuditRow, [number, number]>(
      'SELECT * FROM audit_log WHERE seq > +?1 ORDER BY seq LIMIT +?2',
    ),
  }
  return {
    /** The hash the next row chains to. */
    lastHash: () => q.last.get()?.hash ?? GENESIS_HASH,
    insert: (r: Omit<AuditRow, 'seq'>) =>
      q.insert.get(
        r.at,
        r.user_id,
        r.channel_id,
        r.message_id,
        r.entry,
        r.prev_hash,
        r.hash,
      ) as AuditRow,
    /** A channel's decisions, newest first, before `beforeSeq`. */
    byChannel: (channelId: string, beforeSeq: number, limit: number) =>
      q.byChannel.all(channelId, beforeSeq, limit),
    /** Every row after `afterSeq`, in order: for verifying and exporting page by page. */
    page: (afterSeq: number, limit: number) => q.page.all(afterSeq, limit),
  }
}

export type AuditStore = ReturnType<typeof auditStore>
