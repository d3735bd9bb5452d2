import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { pgMessageStore } from '../../src/messages/pg-store.ts'
import { newMessageText } from '../../src/messages/search/text.ts'
import { msg } from '../stores/message-rows.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// pg migration 012 was rewritten in place for speed (issue 20): a PL/pgSQL walk and a trigger
// that computes from NEW, instead of a recursive SQL CTE read back through the view. This holds
// the rewrite to the first version's text exactly: the first version's definition, below as it
// was, is the reference, compared on generated documents (odd keys, duplicates, escapes, deep
// nesting, html blocks, tables, answers of every shape, bodies that are not JSON); and the rows
// the trigger writes are what the view says, after inserts and after every kind of update.
// (test/pg/schema-parity.test.ts compares the view with SQLite's.) Since pg migration 20 the
// message store's insert writes a new message's row itself, with text the server computes
// (messages/search/text.ts): held here to the same view, on the same generated documents.

const skip = skipWithoutPostgres()

/** pg migration 012's first version: its walk and view, under other names. */
const REFERENCE = `
CREATE FUNCTION ref_json_strings(doc JSON)
RETURNS TABLE (ord INTEGER[], path TEXT, fullkey TEXT, key TEXT, value TEXT)
LANGUAGE sql IMMUTABLE AS $$
  WITH RECURSIVE walk(ord, path, fullkey, key, node) AS (
    SELECT ARRAY[]::INTEGER[], '$'::TEXT, '$'::TEXT, NULL::TEXT, doc
    UNION ALL
    SELECT w.ord || e.o::INTEGER, w.fullkey, e.fullkey, e.key, e.node
    FROM walk w CROSS JOIN LATERAL (
      SELECT x.o, w.fullkey || '.' || x.k, x.k, x.v
      FROM json_each(CASE WHEN json_typeof(w.node) = 'object' THEN w.node ELSE '{}'::JSON END)
        WITH ORDINALITY AS x(k, v, o)
      UNION ALL
      SELECT y.o, w.fullkey || '[' || (y.o - 1) || ']', NULL, y.v
      FROM json_array_elements(CASE WHEN json_typeof(w.node) = 'array' THEN w.node ELSE '[]'::JSON END)
        WITH ORDINALITY AS y(v, o)
    ) AS e(o, fullkey, key, node)
  )
  SELECT ord, path, fullkey, key, node #>> '{}' FROM walk WHERE json_typeof(node) = 'string'
$$;

CREATE VIEW ref_search_text AS
SELECT m.rid AS rid,
  replace(replace(coalesce(d.doc ->> 'title', ''), chr(2), ' '), chr(3), ' ') AS title,
  replace(replace(coalesce((
    SELECT string_agg(j.value, chr(10) ORDER BY j.ord) FROM ref_json_strings(d.doc) j
    WHERE j.fullkey <> '$.title' AND j.path NOT LIKE '$.blocks[%].html'
      AND (j.key IN ('text', 'code', 'label', 'name', 'alt', 'summary', 'description',
                     'placeholder', 'tool', 'key', 'value', 'command')
           OR j.path LIKE '$.blocks[%].columns'
           OR j.path LIKE '$.blocks[%].rows[%]')
  ), '') || coalesce(chr(10) || (
    SELECT string_agg(a.value, chr(10) ORDER BY a.ord)
    FROM ref_json_strings(hark_json_or_null(m.answer)) a
    WHERE a.key IS NULL OR a.key NOT IN ('decision', 'scope')
  ), ''), chr(2), ' '), chr(3), ' ') AS body
FROM messages m CROSS JOIN LATERAL (SELECT hark_json_or_null(m.body) AS doc) d
WHERE m.body IS NOT NULL AND m.deleted_at IS NULL AND d.doc IS NOT NULL;
`

/** A small seeded generator (mulberry32): the same documents on every run. */
function rng(seed: number) {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const KEYS = [
  'title',
  'text',
  'code',
  'label',
  'name',
  'alt',
  'summary',
  'description',
  'placeholder',
  'tool',
  'key',
  'value',
  'command',
  'blocks',
  'html',
  'columns',
  'rows',
  'items',
  'options',
  'input',
  'url',
  'id',
  'type',
  'decision',
  'scope',
  'more',
  'odd key',
  'a.b',
  'x[0]',
  '100%',
  'un_der',
  'Déjà',
  '',
  'title ',
]
const STRINGS = [
  'plain',
  'Déploy',
  '',
  ' ',
  'two\nlines',
  'tab\there',
  'quote " and \\ back',
  '\u0002marked\u0003',
  'emoji 🎉',
  'ünïcödé',
  'web-1',
  'https://example.org/x',
  '%_[]',
  'null',
  'true',
  '42',
]

function generate(r: () => number) {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(r() * xs.length)] as T
  /** JSON text; objects are written by hand so keys may repeat. */
  const value = (depth: number): string => {
    const x = r()
    if (depth > 4 || x < 0.45) {
      const y = r()
      if (y < 0.7) return JSON.stringify(pick(STRINGS))
      if (y < 0.8) return String(Math.floor(r() * 100))
      if (y < 0.9) return pick(['true', 'false', 'null'])
      return '1.5e3'
    }
    if (x < 0.7) {
      const n = Math.floor(r() * 5)
      return `[${Array.from({ length: n }, () => value(depth + 1)).join(', ')}]`
    }
    return object(depth)
  }
  const object = (depth: number): string => {
    const n = Math.floor(r() * 5)
    const members = Array.from({ length: n }, () => {
      const k = pick(KEYS)
      return `${JSON.stringify(k)}: ${k === 'blocks' ? blocks(depth + 1) : value(depth + 1)}`
    })
    return `{${members.join(',')}}`
  }
  const blocks = (depth: number): string => {
    const n = Math.floor(r() * 4)
    const one = () => {
      const kind = pick(['html', 'table', 'other', 'nested'])
      if (kind === 'html')
        return `{"type": "html", "html": ${value(depth + 2)}, "text": ${value(depth + 2)}}`
      if (kind === 'table')
        return `{"type": "table", "columns": ${value(depth + 2)}, "rows": [${value(depth + 2)}, ${value(depth + 2)}]}`
      if (kind === 'nested') return `{"blocks": ${blocks(depth + 2)}, "rows": ${value(depth + 2)}}`
      return object(depth + 1)
    }
    return `[${Array.from({ length: n }, one).join(', ')}]`
  }
  const body = (): string | null => {
    const x = r()
    if (x < 0.05) return null
    if (x < 0.1) return 'not json {'
    if (x < 0.15) return value(0)
    const title = r() < 0.8 ? `"title": ${value(3)}, ` : ''
    return `{${title}"text": ${value(3)}, "blocks": ${blocks(1)}, "more": ${value(1)}}`
  }
  const answer = (): string | null => {
    const x = r()
    if (x < 0.3) return null
    if (x < 0.35) return 'not json'
    if (x < 0.45) return JSON.stringify(pick(STRINGS))
    if (x < 0.5) return '7'
    if (x < 0.75) return object(1)
    return value(0)
  }
  return { body: body(), answer: answer(), deleted: r() < 0.05 }
}

describe.skipIf(skip)('Postgres search text (pg migration 012)', () => {
  let cluster: PgCluster
  let pg: SQL

  beforeAll(async () => {
    cluster = await startCluster()
    pg = new SQL(await cluster.database('search_text'), { max: 2 })
    await migratePostgres(pg)
    await pg.unsafe(REFERENCE)
    await pg`INSERT INTO users (id, email, created_at) VALUES ('u', 'u@x.org', 1)`
    await pg`INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES ('c', 'u', 'l', 1, 1)`
  }, 60_000)

  afterAll(async () => {
    await pg?.close()
    await cluster?.close()
  })

  /** Rows where the index, the view and the first version's view disagree. */
  async function disagreements() {
    return await pg`
      SELECT m.id, m.body, m.answer, r.title AS ref_title, r.body AS ref_body,
        v.title AS view_title, v.body AS view_body, s.title AS index_title, s.body AS index_body
      FROM messages m
        LEFT JOIN ref_search_text r ON r.rid = m.rid
        LEFT JOIN message_search_text v ON v.rid = m.rid
        LEFT JOIN message_search s ON s.rid = m.rid
      WHERE r.title IS DISTINCT FROM v.title OR r.body IS DISTINCT FROM v.body
        OR r.title IS DISTINCT FROM s.title OR r.body IS DISTINCT FROM s.body
        OR (r.rid IS NULL) <> (v.rid IS NULL) OR (r.rid IS NULL) <> (s.rid IS NULL)
      ORDER BY m.rid LIMIT 5`
  }

  test('the same text as the first version, for generated messages, inserted and updated', async () => {
    const r = rng(20)
    const n = 1500
    const rows = Array.from({ length: n }, (_, i) => ({ i, ...generate(r) }))
    for (const m of rows) {
      await pg`INSERT INTO messages (id, channel_id, seq, sender, body, answer, deleted_at, created_at, updated_at)
        VALUES (${`m${m.i}`}, 'c', ${m.i + 1}, 'agent', ${m.body}, ${m.answer}, ${m.deleted ? 1 : null}, 1, 1)`
    }
    expect(await disagreements()).toEqual([])
    // Most of them are indexed, with text on both sides: the generator is not vacuous.
    const [counts] = await pg`SELECT count(*) AS rows,
        count(*) FILTER (WHERE body LIKE '%' || chr(10) || '%') AS with_lines,
        count(*) FILTER (WHERE title <> '') AS with_title
      FROM message_search`
    expect(Number(counts.rows)).toBeGreaterThan(n * 0.75)
    expect(Number(counts.with_lines)).toBeGreaterThan(n * 0.3)
    expect(Number(counts.with_title)).toBeGreaterThan(n * 0.3)

    // Every kind of indexed update: an answer, a new body, a delete and an undelete, a body
    // that is not JSON, a body made NULL; and one that does not re-index (state).
    for (const m of rows) {
      const next = generate(r)
      const k = m.i % 6
      if (k === 0) await pg`UPDATE messages SET answer = ${next.answer} WHERE id = ${`m${m.i}`}`
      else if (k === 1) await pg`UPDATE messages SET body = ${next.body} WHERE id = ${`m${m.i}`}`
      else if (k === 2)
        await pg`UPDATE messages SET deleted_at = CASE WHEN deleted_at IS NULL THEN 2 END WHERE id = ${`m${m.i}`}`
      else if (k === 3) await pg`UPDATE messages SET body = 'nope' WHERE id = ${`m${m.i}`}`
      else if (k === 4)
        await pg`UPDATE messages SET body = NULL, deleted_at = 3 WHERE id = ${`m${m.i}`}`
      else await pg`UPDATE messages SET state = 'done' WHERE id = ${`m${m.i}`}`
    }
    expect(await disagreements()).toEqual([])
  }, 120_000)

  test('the hand-picked cases, exactly', async () => {
    const cases: { body: string; answer: string | null; title: string; text: string }[] = [
      // The title is not body text; a nested `title` is not the title, nor indexed (no key).
      {
        body: '{"title": "T", "x": {"title": "n"}, "text": "a"}',
        answer: null,
        title: 'T',
        text: 'a',
      },
      // Document order, duplicate keys kept (json, not jsonb).
      { body: '{"text": "b", "text": "a", "name": "c"}', answer: null, title: '', text: 'b\na\nc' },
      // An html block's html is never indexed (one level), the rest of the block is.
      {
        body: '{"blocks": [{"html": "<b>x</b>", "text": "t"}, {"html": {"text": "no", "x": {"text": "yes"}}}]}',
        answer: null,
        title: '',
        text: 't\nyes',
      },
      // Table columns and cells, and keyless strings nowhere else.
      {
        body: '{"blocks": [{"columns": ["H"], "rows": [["c1", 2, "c2"]], "other": ["no"]}], "list": ["no"]}',
        answer: null,
        title: '',
        text: 'H\nc1\nc2',
      },
      // Answers: strings but decision and scope; a string answer; not JSON adds nothing.
      {
        body: '{"text": "q"}',
        answer: '{"decision": "allow", "scope": "s", "x": ["y"]}',
        title: '',
        text: 'q\ny',
      },
      { body: '{"text": "q"}', answer: '"yes"', title: '', text: 'q\nyes' },
      { body: '{"text": "q"}', answer: 'nope', title: '', text: 'q' },
      { body: '{}', answer: '{"decision": "deny"}', title: '', text: '' },
      { body: '{}', answer: '{"a": ""}', title: '', text: '\n' },
      // Markers out, escapes read.
      {
        body: '{"title": "a\\u0002b", "text": "c\\u0003\\"d\\n"}',
        answer: null,
        title: 'a b',
        text: 'c "d\n',
      },
    ]
    await pg`DELETE FROM messages`
    for (const [i, c] of cases.entries()) {
      await pg`INSERT INTO messages (id, channel_id, seq, sender, body, answer, created_at, updated_at)
        VALUES (${`h${i}`}, 'c', ${100_000 + i}, 'agent', ${c.body}, ${c.answer}, 1, 1)`
    }
    const got =
      await pg`SELECT s.title, s.body AS text FROM message_search s JOIN messages m USING (rid)
      ORDER BY m.seq`
    expect(got.map((g: { title: string; text: string }) => ({ ...g }))).toEqual(
      cases.map((c) => ({ title: c.title, text: c.text })),
    )
    expect(await disagreements()).toEqual([])
  })

  /** Calls of the view's PL/pgSQL body walk in the current transaction (track_functions). */
  const walks = async (tx: SQL) => {
    const [row] = await tx`SELECT coalesce(sum(calls), 0) AS n FROM pg_stat_xact_user_functions
      WHERE funcname = 'hark_search_body'`
    return Number(row?.n)
  }

  test("the store's insert indexes a new message from the server's text, the view's text exactly", async () => {
    await pg`INSERT INTO users (id, email, created_at) VALUES ('u2', 'u2@x.org', 1)`
    await pg`INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES ('c2', 'u2', 'l', 1, 1)`
    const r = rng(32)
    const n = 1500
    // What a send stores: JSON.stringify's text (the generator's, read and written again).
    const bodies = Array.from({ length: n }, () => generate(r).body).map((b) => {
      try {
        return b === null ? null : JSON.stringify(JSON.parse(b))
      } catch {
        return b
      }
    })
    const message = (i: number, body: string | null) => msg(`s${i}`, 'c2', { body, created_at: 1 })
    const computed = bodies.filter((b) => newMessageText(b) !== undefined).length
    expect(computed).toBeGreaterThan(n * 0.8)
    await pg.begin(async (tx) => {
      await tx`SET LOCAL track_functions = 'pl'`
      const store = pgMessageStore(tx)
      for (const [i, body] of bodies.entries()) await store.insert(message(i, body))
      // Postgres walked none of them: the server's text was written for every one it computed,
      // and the rest have no row by the view's rule (NULL, not JSON).
      expect(await walks(tx)).toBe(0)
      // A body the server leaves to Postgres (a repeated key, not JSON.stringify's text) is
      // indexed by the trigger, by the view's rule.
      await store.insert(message(n, '{"text": "b", "text": "a"}'))
      expect(await walks(tx)).toBe(1)
    })
    expect(await disagreements()).toEqual([])
    const [counts] = await pg`SELECT count(*) AS rows,
        count(*) FILTER (WHERE s.body LIKE '%' || chr(10) || '%') AS with_lines,
        count(*) FILTER (WHERE s.title <> '') AS with_title
      FROM message_search s JOIN messages m USING (rid) WHERE m.channel_id = 'c2'`
    expect(Number(counts.rows)).toBe(computed + 1)
    expect(Number(counts.with_lines)).toBeGreaterThan(n * 0.3)
    expect(Number(counts.with_title)).toBeGreaterThan(n * 0.3)
    const [repeated] = await pg`SELECT s.body FROM message_search s JOIN messages m USING (rid)
      WHERE m.id = ${`s${n}`}`
    expect(repeated?.body).toBe('b\na')
  }, 120_000)

  test("the server's text: markers out, no row for what is not JSON, the rest left to Postgres", () => {
    expect(newMessageText('{"title":"a\\u0002b","text":"c\\u0003d"}')).toEqual({
      title: 'a b',
      body: 'c d',
    })
    expect(
      newMessageText(JSON.stringify({ title: 7, blocks: [{ columns: ['H'], rows: [['x', 1]] }] })),
    ).toEqual({ title: '7', body: 'H\nx' })
    expect(newMessageText('"just a string"')).toEqual({ title: '', body: '' })
    expect(newMessageText(null)).toBeUndefined()
    expect(newMessageText('not json {')).toBeUndefined()
    // Not JSON.stringify's text, or text Postgres' json refuses: Postgres decides.
    expect(newMessageText('{"text": "spaced"}')).toBeUndefined()
    expect(newMessageText('{"text":"\\u00e9"}')).toBeUndefined()
    expect(newMessageText('{"text":"\\u0000"}')).toBeUndefined()
    expect(newMessageText('{"text":"\\ud800"}')).toBeUndefined()
  })
})
