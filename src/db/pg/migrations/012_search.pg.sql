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
-- - SQLite's json_tree becomes hark_search_strings(), a walk of the `json` type (not `jsonb`,
--   which would sort keys), in document order and with json_tree's paths, so the same GLOB
--   filters work as LIKE patterns (GLOB's `*` is LIKE's `%`, `[[]` a literal `[`).
--
-- Changed in place before the first release that serves on Postgres (issue 20: the index's
-- upkeep was ~85% of a message INSERT's time). The first version walked the body with a
-- recursive SQL CTE over json_each/json_array_elements and the trigger read the row back through
-- the view; now a PL/pgSQL walk filters as it goes, the trigger computes from NEW with the same
-- functions the view calls, and the answer is not walked when there is none. Same text, same
-- order (test/pg/search-text.test.ts compares it with the first version's on generated
-- documents). The trigger's time per insert, one transaction each on the test cluster (2 busy
-- cores): ~135-195 -> ~45-80 us for a small body (title, text, one block), ~465-490 -> ~220 us
-- for one with six blocks; an answer's update ~460-530 -> ~215-235 us. Measured, not the cost:
-- hark_json_or_null's subtransaction (~0.3 us a call). EXPLAIN ANALYZE's 1.6-2.4 ms for the
-- first version was its first executions in a session (PL/pgSQL replans the view for each of
-- the first five), ~0.2 ms after.

-- unaccent is a trusted extension (Postgres 13+): the database's owner may create it.
CREATE EXTENSION IF NOT EXISTS unaccent;

-- SQLite's json_valid() + use: NULL for text that is not JSON (a stored body or answer always
-- is, but the index must never make a write fail). An exception block is a subtransaction, but
-- one that writes nothing costs ~0.3 us here; pg_input_is_valid() would need Postgres 16.
-- Not PARALLEL SAFE: a parallel worker cannot start a subtransaction.
CREATE FUNCTION hark_json_or_null(doc TEXT) RETURNS JSON
LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN doc::json;
EXCEPTION WHEN others THEN
  RETURN NULL;
END
$$;

-- The indexed strings under the object or array `node`, whose json_tree path ("fullkey") is
-- `fullkey`, in document order, one a line; NULL when there are none. What json_tree gave the
-- first version as rows: a string's `path` is its container's fullkey, its own fullkey
-- `path.key` or `path[i]`, its `key` the object key (none for an array element). `answer`:
-- the answer's rule (every string but a `decision` or `scope`), else the body's (the SQLite
-- migration's list of keys, table columns and cells, never under an html block's `html`, the
-- title apart).
CREATE FUNCTION hark_search_strings(node JSON, answer BOOLEAN, fullkey TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  r RECORD;
  part TEXT;
  acc TEXT;
BEGIN
  -- One loop for either container: an object's members (key, `path.key`) or an array's
  -- elements (no key, `path[i]`), in document order; the other half is empty.
  FOR r IN
    SELECT e.key, e.value, json_typeof(e.value) AS type, fullkey || '.' || e.key AS child
    FROM json_each(CASE WHEN json_typeof(node) = 'object' THEN node ELSE '{}'::JSON END) e
    UNION ALL
    SELECT NULL, e.value, json_typeof(e.value), fullkey || '[' || (e.i - 1) || ']'
    FROM json_array_elements(CASE WHEN json_typeof(node) = 'array' THEN node ELSE '[]'::JSON END)
      WITH ORDINALITY AS e(value, i)
  LOOP
    IF r.type = 'string' THEN
      IF answer THEN
        -- An array element has no key: `NULL IN (...)` is not true, so it is kept.
        CONTINUE WHEN r.key IN ('decision', 'scope');
      ELSIF r.key IS NULL THEN
        -- No key: a body's string in an array counts only as a table's column or cell.
        CONTINUE WHEN NOT (fullkey NOT LIKE '$.blocks[%].html'
          AND (fullkey LIKE '$.blocks[%].columns' OR fullkey LIKE '$.blocks[%].rows[%]'));
      ELSE
        -- The string's fullkey is '$.title' only for the key `title` of the root.
        CONTINUE WHEN NOT ((fullkey <> '$' OR r.key <> 'title')
          AND fullkey NOT LIKE '$.blocks[%].html'
          AND (r.key IN ('text', 'code', 'label', 'name', 'alt', 'summary', 'description',
                         'placeholder', 'tool', 'key', 'value', 'command')
               OR fullkey LIKE '$.blocks[%].columns'
               OR fullkey LIKE '$.blocks[%].rows[%]'));
      END IF;
      part := r.value #>> '{}';
    ELSIF r.type = 'object' OR r.type = 'array' THEN
      part := hark_search_strings(r.value, answer, r.child);
      CONTINUE WHEN part IS NULL;
    ELSE
      CONTINUE;
    END IF;
    acc := CASE WHEN acc IS NULL THEN part ELSE acc || chr(10) || part END;
  END LOOP;
  RETURN acc;
END
$$;

-- A message's indexed title, from its body (JSON). Plain SQL: inlined where it is called.
CREATE FUNCTION hark_search_title(doc JSON) RETURNS TEXT
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT replace(replace(coalesce(doc ->> 'title', ''), chr(2), ' '), chr(3), ' ')
$$;

-- A message's indexed body text: the body's strings, then the answer's (a line apart; an
-- answer that is not JSON adds nothing). PL/pgSQL, not SQL: an SQL function that cannot be
-- inlined is planned anew in every transaction that calls it from the trigger.
CREATE FUNCTION hark_search_body(doc JSON, answer TEXT) RETURNS TEXT
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  a JSON;
  strings TEXT;
  more TEXT;
BEGIN
  IF json_typeof(doc) IN ('object', 'array') THEN
    strings := hark_search_strings(doc, false, '$');
  END IF;
  IF answer IS NOT NULL THEN
    a := hark_json_or_null(answer);
    CASE json_typeof(a)
    WHEN 'object', 'array' THEN
      more := hark_search_strings(a, true, '$');
    WHEN 'string' THEN
      more := a #>> '{}';
    ELSE
    END CASE;
  END IF;
  RETURN replace(replace(coalesce(strings, '') || coalesce(chr(10) || more, ''),
    chr(2), ' '), chr(3), ' ');
END
$$;

-- What a message is found by, in one place for the backfill, the parity test and reading; the
-- trigger calls the same functions on NEW. OFFSET 0: the body is checked once per row.
CREATE VIEW message_search_text AS
SELECT m.rid AS rid, hark_search_title(d.doc) AS title, hark_search_body(d.doc, m.answer) AS body
FROM messages m CROSS JOIN LATERAL (SELECT hark_json_or_null(m.body) AS doc OFFSET 0) d
WHERE m.body IS NOT NULL AND m.deleted_at IS NULL AND d.doc IS NOT NULL;

CREATE TABLE message_search (
  rid       BIGINT PRIMARY KEY REFERENCES messages(rid) ON DELETE CASCADE,
  title     TEXT NOT NULL,
  body      TEXT NOT NULL,
  document  TSVECTOR NOT NULL
);
CREATE INDEX message_search_document ON message_search USING GIN (document);

-- One message's row, rebuilt from NEW by the view's rule (nothing when it is deleted, has no
-- body or a body that is not JSON), without reading the row back through the view.
CREATE FUNCTION message_search_refresh() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
DECLARE
  doc JSON;
  title TEXT;
  body TEXT;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM message_search WHERE rid = OLD.rid;
  END IF;
  IF NEW.body IS NULL OR NEW.deleted_at IS NOT NULL THEN
    RETURN NULL;
  END IF;
  doc := hark_json_or_null(NEW.body);
  IF doc IS NULL THEN
    RETURN NULL;
  END IF;
  title := hark_search_title(doc);
  body := hark_search_body(doc, NEW.answer);
  INSERT INTO message_search (rid, title, body, document)
    VALUES (NEW.rid, title, body,
      setweight(to_tsvector('simple', unaccent(title)), 'A') ||
      setweight(to_tsvector('simple', unaccent(body)), 'B'));
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
