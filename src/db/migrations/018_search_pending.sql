-- Hark schema, version 18: the full-text index written once per commit, not once per message
-- (issue 32, the send path).
--
-- The insert trigger of migration 012 wrote each new message into FTS5 in its own statement,
-- inside the unit's savepoint: ~35-50 µs of a send's CPU (the largest single cost of the send's
-- SQL). An INSERT into FTS5 costs most per statement, not per row: on a bare FTS5 table,
-- 19-22 µs a row one statement each, 26-28 inside a savepoint, 4-6 µs a row 32 rows to a
-- statement, with the same index pages written either way (bench/README.md). So a new message's row is noted here by the trigger (a plain
-- b-tree insert: nothing can forget to note it, whatever path inserted the message), and the
-- writer indexes every noted row in one statement, in the same transaction, just before its
-- COMMIT (`searchIndexer` in src/messages/search/store.ts, called by the group commit and by
-- the direct write path): a message is in the index when its write commits, so before its
-- send is answered. A row noted by another process that did not index it (an operator's
-- sqlite3) is indexed by the server's next commit, and at start.
--
-- An edit, an answer or a delete of a message still noted indexes it (or drops it) at once, as
-- in 012, and takes the note away, so the commit never indexes a row twice.
CREATE TABLE message_fts_pending (rid INTEGER PRIMARY KEY);

DROP TRIGGER message_fts_insert;
CREATE TRIGGER message_fts_insert AFTER INSERT ON messages WHEN NEW.body IS NOT NULL
BEGIN
  INSERT INTO message_fts_pending (rid) VALUES (NEW.rid);
END;

DROP TRIGGER message_fts_update;
CREATE TRIGGER message_fts_update AFTER UPDATE OF body, answer, deleted_at ON messages
BEGIN
  DELETE FROM message_fts_pending WHERE rid = OLD.rid;
  DELETE FROM message_fts WHERE rowid = OLD.rid;
  INSERT INTO message_fts (rowid, title, body)
    SELECT rid, title, body FROM message_search_text WHERE rid = NEW.rid;
END;

DROP TRIGGER message_fts_delete;
CREATE TRIGGER message_fts_delete AFTER DELETE ON messages
BEGIN
  DELETE FROM message_fts_pending WHERE rid = OLD.rid;
  DELETE FROM message_fts WHERE rowid = OLD.rid;
END;
