-- Hark schema, version 14: nothing on SQLite. On Postgres (pg/migrations/014_instances.pg.sql)
-- the state that several instances on one database must share and that one embedded server
-- keeps elsewhere: the write rate limit's buckets (in memory here) and the VAPID key pair (the
-- data directory's vapid.json here). The version exists on both engines so they stay one line.
SELECT 1;
