-- Hark schema, version 10: safe retries (PRODUCT.md "Safe retries").
-- The answer each `Idempotency-Key` got, per channel, written in the transaction of the write it
-- answers: a key is stored if and only if its write committed, so a retry after a crash either
-- finds the answer or writes for the first time, never twice. Kept 24 h (`created_at`), swept by
-- later keyed writes; a channel's keys go with it.
CREATE TABLE idempotency_keys (
  channel_id    TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  key           TEXT NOT NULL,
  -- SHA-256 (hex) of the canonical request: method, path and query, body.
  request_hash  TEXT NOT NULL,
  status        INTEGER NOT NULL,
  -- The answer's JSON text, replayed byte for byte.
  response      TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  PRIMARY KEY (channel_id, key)
) WITHOUT ROWID;
CREATE INDEX idempotency_keys_by_age ON idempotency_keys(created_at);
