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

/** What the person looks for: every word must occur; the last is also a prefix when `prefix`. */
export interface SearchTerms {
  words: readonly string[]
  prefix: boolean
}

/**
 * The words as an FTS5 query that means only "these words": each word is a quoted phrase (a
 * `"` inside doubled), so `*`, `-`, `:`, `^`, parentheses, NEAR, AND, OR and NOT are text, never
 * syntax; the phrases are ANDed. The last word is also a prefix (`"dep"*`) when asked.
 */
export function ftsQuery(terms: SearchTerms): string {
  const last = terms.words.length - 1
  return terms.words
    .map((w, i) => {
      const phrase = `"${w.replaceAll('"', '""')}"`
      return terms.prefix && i === last ? `${phrase}*` : phrase
    })
    .join(' ')
}

/**
 * The person's messages matching the terms (?1: their FTS5 query, see ftsQuery), best first,
 * then the newest, so the order is total and a page at an offset is the same page on every call
 * while nothing changes. The index spans everyone (migration 012); the join keeps only the
 * person's own channels, and leaves out pins (the thread shows them apart, not at an address)
 * and deleted messages.
 *
 * Ranked by the message alone, never by statistics of the whole index (issue 31): FTS5's bm25()
 * weighs a word by how many messages of everyone's hold it and lengths by everyone's average,
 * so another person could move the order of his own results by what he wrote, and read from
 * it how often a word occurs in other people's messages. The score keeps bm25's shape for one
 * message: its matches (highlight()'s one-byte marks, counted by the bytes they add), those in
 * the title weighing five times, saturating (k1 = 1.2), against the message's length in bytes
 * (b = 0.75, a fixed 500 for the average). Given up: the weight of rare words over common ones
 * (every word must occur anyway) and the average (docs/decisions.md, issue 31).
 *
 * The page is ranked first and only its rows get a snippet: snippet() over every match before
 * the sort cost 2.5× as much (20,000 matches: ~40 ms against ~100 ms).
 */
export function searchStore(db: Database) {
  const q = {
    search: db.query<SearchRow, [string, string, number, number]>(
      `WITH hits AS (
         SELECT message_fts.rowid AS rid,
           octet_length(highlight(message_fts, 0, char(2), '')) - octet_length(message_fts.title)
             AS in_title,
           octet_length(highlight(message_fts, 1, char(2), '')) - octet_length(message_fts.body)
             AS in_body,
           octet_length(message_fts.title) + octet_length(message_fts.body) AS bytes
         FROM message_fts
           JOIN messages m ON m.rid = message_fts.rowid
           JOIN channels c ON c.id = m.channel_id
         WHERE message_fts MATCH +?1 AND c.user_id = +?2
           AND m.pin_key IS NULL AND m.deleted_at IS NULL
       ), ranked AS (
         SELECT rid, (5.0 * in_title + in_body) * 2.2
             / (5.0 * in_title + in_body + 1.2 * (0.25 + 0.75 * bytes / 500.0)) AS score
         FROM hits
         ORDER BY score DESC, rid DESC
         LIMIT +?3 OFFSET +?4)
       SELECT m.id AS id, m.channel_id AS channel_id, c.label AS channel_label,
         m.sender AS sender, m.created_at AS created_at,
         snippet(message_fts, -1, char(2), char(3), '…', 20) AS snippet
       FROM ranked
         JOIN message_fts ON message_fts.rowid = ranked.rid
         JOIN messages m ON m.rid = ranked.rid
         JOIN channels c ON c.id = m.channel_id
       WHERE message_fts MATCH +?1
       ORDER BY ranked.score DESC, ranked.rid DESC`,
    ),
  }
  return {
    /** Up to `limit` hits after the first `offset`. */
    search: (userId: string, terms: SearchTerms, limit: number, offset: number) =>
      q.search.all(ftsQuery(terms), userId, limit, offset),
  }
}

export type SearchStore = ReturnType<typeof searchStore>

/**
 * Indexes every message noted since the last commit (migration 018) in one statement, then
 * drops the notes: the writer calls it in its transaction, just before COMMIT, so a message is
 * in the index when its write commits. One statement for a batch instead of one per message:
 * an FTS5 insert costs most per statement (a fifth as much a row, 32 rows to a statement).
 * With nothing noted (a batch of answers, acks, reads) it costs one index probe.
 */
export function searchIndexer(db: Database): () => void {
  const noted = db.query<{ n: number }, []>(
    'SELECT EXISTS (SELECT 1 FROM message_fts_pending) AS n',
  )
  // CROSS JOIN keeps the notes outside: each looks its message up by rid (a plain JOIN may
  // scan every message, as the planner cannot tell the notes are few).
  const index = db.query<null, []>(
    `INSERT INTO message_fts (rowid, title, body)
       SELECT s.rid, s.title, s.body FROM message_fts_pending p
         CROSS JOIN message_search_text s ON s.rid = p.rid`,
  )
  const clear = db.query<null, []>('DELETE FROM message_fts_pending')
  return () => {
    if (noted.get()?.n !== 1) return
    index.run()
    clear.run()
  }
}
