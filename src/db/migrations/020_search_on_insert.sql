-- Hark schema, version 20: nothing on SQLite. On Postgres (pg/migrations/020_search_on_insert.pg.sql)
-- the message store's insert writes a new message's search row in its own statement, and the
-- insert trigger leaves a row it finds there alone. The version exists on both engines so they
-- stay one line.
SELECT 1;
