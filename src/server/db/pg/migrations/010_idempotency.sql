-- Hark schema on PostgreSQL, version 10: mirrors ../../migrations/010_idempotency.sql.
CREATE TABLE idempotency_keys (
  channel_id    TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  key           TEXT NOT NULL,
  request_hash  TEXT NOT NULL,
  status        INTEGER NOT NULL,
  response      TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  PRIMARY KEY (channel_id, key)
);
CREATE INDEX idempotency_keys_by_age ON idempotency_keys(created_at);
