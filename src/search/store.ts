import type { Database } from 'bun:sqlite'

/** One hit of a search, with its snippet as FTS5 marks it (`MARK_OPEN` … `MARK_CLOSE`). */
export interface SearchRow {
  id: string
  channel_id: string
  channel_label: string
  sender: 'agent' | 'human'
  created_at: number
  snippet: string
}

/**
 * snippet()'s markers around a match: control characters that the index never holds (migration
 * 012 takes them out of the text), so the service can split on them and no markup is involved.
 */
export const MARK_OPEN = '\u0002'
export const MARK_CLOSE = '\u0003'

/**
 * The person's messages matching an FTS5 query (?1, already quoted by the service), best
 * first: bm25 with the title weighing five times the rest, then the newest, so the order is
 * total and a page at an offset is the same page on every call while nothing changes. The
 * index spans everyone (migration 012); the join keeps only the person's own channels, and
 * leaves out pins (the thread shows them apart, not at an address) and deleted messages.
 */
export function searchStore(db: Database) {
  const q = {
    search: db.query<SearchRow, [string, string, number, number]>(
      `SELECT m.id AS id, m.channel_id AS channel_id, c.label AS channel_label,
         m.sender AS sender, m.created_at AS created_at,
         snippet(message_fts, -1, char(2), char(3), '…', 20) AS snippet
       FROM message_fts
         JOIN messages m ON m.rid = message_fts.rowid
         JOIN channels c ON c.id = m.channel_id
       WHERE message_fts MATCH ?1 AND c.user_id = ?2
         AND m.pin_key IS NULL AND m.deleted_at IS NULL
       ORDER BY bm25(message_fts, 5.0, 1.0), m.rid DESC
       LIMIT ?3 OFFSET ?4`,
    ),
  }
  return {
    /** Up to `limit` hits after the first `offset`; `match` is an FTS5 query. */
    search: (userId: string, match: string, limit: number, offset: number) =>
      q.search.all(match, userId, limit, offset),
  }
}

export type SearchStore = ReturnType<typeof searchStore>
