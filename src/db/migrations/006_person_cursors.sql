-- Hark schema, version 6: one change sequence per person.
-- Until now every change to any message took the next number of one server-wide counter, so
-- the size of a cursor's jumps told a person how busy everyone else was. Now each person has
-- their own sequence: a change to a message of theirs, or to one of their channels, takes the
-- next number of their `change_seq`, and a message's `seq` is that number. Their feed's, their
-- channel list's and each of their channels' cursors move with their own changes only.
--
-- Every person already there continues from the counter's current value: a cursor any client
-- holds is at most that, so it stays valid and nobody's next change is numbered below it (no
-- change is skipped). Existing rows keep their numbers. People added later start at 0.
ALTER TABLE users ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
UPDATE users SET change_seq = (SELECT value FROM counters WHERE name = 'change_seq');

-- A seq is now unique per person, not server-wide (two people's changes may share a number).
-- Every feed reads by channel and seq, the person's feed one channel at a time too, so
-- (channel_id, seq) is the index they need, now unique: within a channel, one person's
-- sequence numbers each change once.
DROP INDEX messages_by_seq;
DROP INDEX messages_feed;
CREATE UNIQUE INDEX messages_feed ON messages(channel_id, seq);

-- `counters.change_seq` stays as the highest number handed out to anyone (kept by the code
-- next to each person's sequence): a high-water mark for checks of the data (a backup holds
-- every message up to it, no seq lies above it). It is server-wide, so it is never handed to a
-- client.
