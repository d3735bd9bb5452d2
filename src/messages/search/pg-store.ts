import type { SQL } from 'bun'
import { every, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import type { SearchRow, SearchStore } from './store.ts'

const row = rowOf<SearchRow>({ ints: ['created_at'] })

/**
 * search/store.ts on Postgres (see db/pg/twin.ts), over pg migration 012's index: the
 * table `message_search` (title and body text and their tsvector `document`, title weighted A,
 * body B, under GIN), kept current by triggers on `messages` (a new message's row written by its
 * insert: messages/pg-store.ts, pg migration 20). Read-only: nothing to lock.
 *
 * The terms become a tsquery in SQL, never by pasting text into query syntax: each word is
 * unaccent()ed (the index is of unaccented text) and parsed by the `simple` configuration as
 * the index was, as a phrase (`phraseto_tsquery`: a word the parser splits, like `x-ray`,
 * must occur as written, as an FTS5 phrase must), the last word instead as a prefix
 * (`to_tsquery` of the word quoted as one lexeme, `'dep':*`); the words are ANDed. A word
 * that leaves no lexeme is dropped, as FTS5 drops it; none left, nothing is found.
 *
 * Ranking is ts_rank, not bm25 (docs/scaling.md): the weights {D, C, B, A} = {0.1, 0.2, 0.2,
 * 1.0} make the title weigh five times the body, as SQLite's ranking does, and
 * normalization 1 divides by 1 + log(length), so a long message does not win by size. It reads
 * the row's tsvector alone, no statistic of everyone's messages, so what others write never
 * moves a person's order (issue 31). Ties go to the newest (rid), so a page at an offset is the
 * same page on every call.
 *
 * The snippet is ts_headline over the title and body (one fragment of up to 20 words, as
 * snippet() gives 20 tokens), marked with MARK_OPEN/MARK_CLOSE. The index is of unaccented
 * text but the snippet must show the text as written, which ts_headline compares word by word
 * with its query: so it gets a query of the message's own words (accents kept) whose unaccented
 * form is one of the terms' (or starts with the prefix): "deploiement" marks "Déploiement".
 */
export function pgSearchStore(sql: SQL): PgTwin<SearchStore> {
  return {
    search(userId, terms, limit, offset) {
      const words = JSON.stringify(terms.words)
      const last = terms.words.length
      return every(
        sql`
        WITH terms AS (
          SELECT unaccent(t.w) AS w, ${terms.prefix}::boolean AND t.i = ${last} AS prefix
          FROM json_array_elements_text(${words}::text::json) WITH ORDINALITY AS t(w, i)
        ), parts AS (
          SELECT CASE WHEN prefix
            THEN to_tsquery('simple',
              '''' || replace(replace(w, '\\', '\\\\'), '''', '''''') || ''':*')
            ELSE phraseto_tsquery('simple', w) END AS q
          FROM terms
        ), query AS (
          SELECT string_agg('(' || q::text || ')', ' & ')::tsquery AS q
          FROM parts WHERE numnode(q) > 0
        ), lexemes AS (
          SELECT DISTINCT l, prefix FROM terms,
            unnest(tsvector_to_array(to_tsvector('simple', w))) AS l
        ), page AS (
          SELECT s.rid, ts_rank('{0.1, 0.2, 0.2, 1.0}', s.document, query.q, 1) AS score
          FROM query, message_search s
            JOIN messages m ON m.rid = s.rid
            JOIN channels c ON c.id = m.channel_id
          WHERE s.document @@ query.q AND c.user_id = ${userId}
            AND m.pin_key IS NULL AND m.deleted_at IS NULL
          ORDER BY score DESC, s.rid DESC
          LIMIT ${limit} OFFSET ${offset}
        )
        SELECT m.id, m.channel_id, c.label AS channel_label, m.sender, m.created_at,
          ts_headline('simple', s.title || chr(10) || s.body, coalesce(marks.q, ''::tsquery),
            'StartSel=' || chr(2) || ', StopSel=' || chr(3) ||
            ', MaxWords=20, MinWords=8, ShortWord=0, MaxFragments=1') AS snippet
        FROM page
          JOIN message_search s ON s.rid = page.rid
          JOIN messages m ON m.rid = page.rid
          JOIN channels c ON c.id = m.channel_id
          CROSS JOIN LATERAL (
            SELECT string_agg(DISTINCT
              '''' || replace(replace(d.l, '\\', '\\\\'), '''', '''''') || '''', ' | ')::tsquery AS q
            FROM unnest(tsvector_to_array(to_tsvector('simple', s.title || ' ' || s.body))) AS d(l)
            WHERE EXISTS (SELECT 1 FROM lexemes k WHERE unaccent(d.l) = k.l
                            OR (k.prefix AND starts_with(unaccent(d.l), k.l)))
          ) AS marks
        ORDER BY page.score DESC, page.rid DESC`,
        row,
      )
    },
  }
}
