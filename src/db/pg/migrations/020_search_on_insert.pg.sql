-- Hark schema on PostgreSQL, version 20: a new message's search row written by the insert
-- itself (issue 32, one person's sends on Postgres). This file replaces the translation of
-- ../../migrations/020_search_on_insert.sql (nothing on SQLite).
--
-- The insert trigger of 012 walked each new message's body in PL/pgSQL and inserted its row in
-- a statement of its own: ~0.15 ms of Postgres' CPU per send (of ~0.7 ms). The message store's
-- insert (src/messages/pg-store.ts) now writes the row in the insert's own statement, with the
-- title and body text computed by the server (src/messages/search/text.ts, held to the view's
-- text by test/pg/search-text.test.ts): ~0.03 ms. The trigger stays, so that a message written
-- by any other path (a body the server leaves to Postgres, an operator's INSERT) is still
-- indexed by the view's rule; on an insert it first looks for the message's row, and leaves one
-- it finds alone (the statement's own rows are visible to its AFTER trigger). Edits, answers
-- and deletes re-index as before.
CREATE OR REPLACE FUNCTION message_search_refresh() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
DECLARE
  doc JSON;
  title TEXT;
  body TEXT;
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM message_search WHERE rid = OLD.rid;
  ELSIF EXISTS (SELECT 1 FROM message_search WHERE rid = NEW.rid) THEN
    RETURN NULL;
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
