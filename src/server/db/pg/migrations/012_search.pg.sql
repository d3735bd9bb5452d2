-- Hark schema on PostgreSQL, version 12: full-text search. This file replaces the translation of
-- ../../migrations/012_search.sql whole (every statement there is SQLite-only: json_tree, GLOB,
-- FTS5, trigger bodies), and mirrors it in what it indexes and when, not in how.
--
-- The same design as on SQLite: the view `message_search_text` says once, in SQL, what a
-- message is found by (the same fields: see the SQLite migration's comment), and triggers on
-- `messages` keep the index current whatever path a write took, with the same backfill.
-- The differences, which test/pg/schema-parity.test.ts allows by name:
-- - FTS5's virtual table `message_fts` (and its shadow tables) is the plain table
--   `message_search`: rid, the title and body text (kept for ts_headline, as FTS5 keeps its copy
--   for snippet()), and `document`, their tsvector, under a GIN index. Its rid references the
--   message ON DELETE CASCADE, so a deleted message (or channel, or person) leaves no row: no
--   delete trigger is needed.
-- - unicode61 remove_diacritics 2 becomes the `simple` configuration (words as written,
--   lowercased, no stemming, no stop words: like unicode61, which does not stem) over
--   unaccent()'d text ("deploy" finds "Déploy"); prefix queries are to_tsquery's `dep:*`.
--   The tokenizers split words slightly differently (Postgres' parser keeps e.g. URLs, emails
--   and hyphenated words together, and adds their parts).
-- - Ranking: the title weighs more through setweight A (title) / B (body), for ts_rank's
--   weights; FTS5 takes bm25 weights at query time instead. Not bm25, so scores differ.
-- - SQLite's json_tree becomes hark_json_strings(), a walk of the `json` type (not `jsonb`,
--   which would sort keys), in document order and with json_tree's paths, so the same GLOB
--   filters work as LIKE patterns (GLOB's `*` is LIKE's `%`, `[[]` a literal `[`).
-- unaccent is a trusted extension (Postgres 13+): the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS unaccent;

-- SQLite's json_valid() + use: NULL for text that is not JSON (a stored body or answer always
-- is, but the index must never make a write fail).
CREATE FUNCTION hark_json_or_null(doc TEXT) RETURNS JSON
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN doc::json;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;

-- Every string in `doc`, like json_tree's rows of type 'text': `ord` orders them as in the
-- document, `path` is the parent's path and `fullkey` the string's own ('$.blocks[0].text'),
-- `key` the object key (NULL for array elements and the root, which json_tree gives as an
-- index or NULL: neither matches a key name).
CREATE FUNCTION hark_json_strings(doc JSON)
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

CREATE VIEW message_search_text AS
SELECT m.rid AS rid,
  replace(replace(coalesce(d.doc ->> 'title', ''), chr(2), ' '), chr(3), ' ') AS title,
  replace(replace(coalesce((
    SELECT string_agg(j.value, chr(10) ORDER BY j.ord) FROM hark_json_strings(d.doc) j
    WHERE j.fullkey <> '$.title' AND j.path NOT LIKE '$.blocks[%].html'
      AND (j.key IN ('text', 'code', 'label', 'name', 'alt', 'summary', 'description',
                     'placeholder', 'tool', 'key', 'value', 'command')
           OR j.path LIKE '$.blocks[%].columns'
           OR j.path LIKE '$.blocks[%].rows[%]')
  ), '') || coalesce(chr(10) || (
    SELECT string_agg(a.value, chr(10) ORDER BY a.ord)
    FROM hark_json_strings(hark_json_or_null(m.answer)) a
    WHERE a.key IS NULL OR a.key NOT IN ('decision', 'scope')
  ), ''), chr(2), ' '), chr(3), ' ') AS body
FROM messages m CROSS JOIN LATERAL (SELECT hark_json_or_null(m.body) AS doc) d
WHERE m.body IS NOT NULL AND m.deleted_at IS NULL AND d.doc IS NOT NULL;

CREATE TABLE message_search (
  rid       BIGINT PRIMARY KEY REFERENCES messages(rid) ON DELETE CASCADE,
  title     TEXT NOT NULL,
  body      TEXT NOT NULL,
  document  TSVECTOR NOT NULL
);
CREATE INDEX message_search_document ON message_search USING GIN (document);

-- One message's row, rebuilt from the view (nothing when it is deleted or has no body).
CREATE FUNCTION message_search_refresh() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM message_search WHERE rid = OLD.rid;
  END IF;
  INSERT INTO message_search (rid, title, body, document)
    SELECT t.rid, t.title, t.body,
      setweight(to_tsvector('simple', unaccent(t.title)), 'A') ||
      setweight(to_tsvector('simple', unaccent(t.body)), 'B')
    FROM message_search_text t WHERE t.rid = NEW.rid;
  RETURN NULL;
END
$$;

INSERT INTO message_search (rid, title, body, document)
  SELECT t.rid, t.title, t.body,
    setweight(to_tsvector('simple', unaccent(t.title)), 'A') ||
    setweight(to_tsvector('simple', unaccent(t.body)), 'B')
  FROM message_search_text t;

CREATE TRIGGER message_search_insert AFTER INSERT ON messages
  FOR EACH ROW WHEN (NEW.body IS NOT NULL) EXECUTE FUNCTION message_search_refresh();

-- Only writes that change what is indexed: a state change or a read mark does not re-index.
CREATE TRIGGER message_search_update AFTER UPDATE OF body, answer, deleted_at ON messages
  FOR EACH ROW EXECUTE FUNCTION message_search_refresh();
