-- Hark schema, version 19: an agent's send writes three of the messages table's indexes, not
-- five (issue 32, the send path).
--
-- Two indexes existed only to filter by sender: messages_feed_by_sender (the feed of one side:
-- an agent reading what the person wrote) and messages_live_by_sender (a channel's unread count:
-- the agent's live messages after the person's read mark). Every message paid for both, and
-- almost every message is the agent's. Measured on the send's SQL alone, quiet machine
-- (bench/send-sql.ts --drop): 55.4 and 51.6 µs a send with them, 41.8 and 43.7 without.
--
-- - The person's messages get their own small index (only their rows are in it): the feed of
--   `sender=human` reads it (the store writes the sender into the statement: a partial index
--   serves only a statement whose text implies its condition). The feed of `sender=agent`
--   reads messages_feed and passes over the person's few messages between.
-- - The unread count reads messages_live (channel, rid) and checks the sender on the row, as
--   it checked the row's deleted and pin columns before: it passes over the person's own live
--   messages after the read mark (few: they were written in the open channel) and still stops
--   at 1000.
DROP INDEX messages_feed_by_sender;
DROP INDEX messages_live_by_sender;
CREATE INDEX messages_feed_human ON messages(channel_id, seq) WHERE sender = 'human';
