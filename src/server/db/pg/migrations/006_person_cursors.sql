-- Hark schema on PostgreSQL, version 6: mirrors ../../migrations/006_person_cursors.sql.
--
-- Why `seq` comes from a counter row and not from a Postgres SEQUENCE. A reader's cursor says
-- "I have every change up to seq N"; it must never pass a change that commits later. A
-- SEQUENCE hands out numbers at nextval(), outside the transaction's order: T1 takes 7, T2
-- takes 8 and commits, a reader reads up to 8 and moves its cursor there, then T1 commits 7,
-- which that reader never sees. With many instances writing at once this is the normal case.
--
-- Here the counter is the person's row: a change takes its number with
--   UPDATE users SET change_seq = change_seq + 1 WHERE id = $1 RETURNING change_seq
-- inside the writing transaction (the statements of src/messages/store.ts, unchanged). The
-- UPDATE locks that row until the transaction ends, so a second writer for the same person
-- waits at its UPDATE and, once the first commits, re-reads the committed row (READ COMMITTED
-- re-checks an updated row) and takes the next number; if the first rolled back, it takes the
-- same number (no gap). So one person's numbers are handed out in the order their transactions
-- commit: when a reader sees seq N committed, every seq below N of that person is committed
-- (or was never used). Every feed reads one person's changes (their channels share their
-- sequence), so no cursor skips a row. Writers for different people lock different rows and
-- never wait for each other; one server-wide counter row would queue every write of every
-- instance behind one lock.
--
-- What the Postgres stores (not written yet) must keep: take the number (the UPDATE above)
-- before inserting the message, so `rid` (an identity, handed out like a sequence) is also
-- drawn under the person's lock, in commit order within a person: read marks (channels.read_rid)
-- and unread counts compare rids of one channel. And `counters.change_seq`, the server-wide
-- high-water mark, must not be updated by every write there (that is the one row every writer
-- would queue on); it can be computed as max(users.change_seq) when a check needs it.
ALTER TABLE users ADD COLUMN change_seq BIGINT NOT NULL DEFAULT 0;
UPDATE users SET change_seq = (SELECT value FROM counters WHERE name = 'change_seq');

DROP INDEX messages_by_seq;
DROP INDEX messages_feed;
CREATE UNIQUE INDEX messages_feed ON messages(channel_id, seq);
