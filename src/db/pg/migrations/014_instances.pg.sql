-- Hark schema, version 14, Postgres only (SQLite's 014 is empty): what several instances on
-- one database must share, that one embedded server keeps in memory or in its data directory.

-- The write rate limit (120 writes a minute per channel and per person, --write-limit) as one
-- token bucket per key, taken in one statement by whichever instance serves the write, so the
-- limit holds however many instances share the traffic (src/access/shared-limit.ts).
CREATE TABLE rate_buckets (
  key     TEXT PRIMARY KEY,
  tokens  DOUBLE PRECISION NOT NULL,
  at      BIGINT NOT NULL
);
CREATE INDEX rate_buckets_at ON rate_buckets (at);

-- The VAPID key pair that signs every web push: one row, made by the first instance that
-- needs it (INSERT ... ON CONFLICT DO NOTHING, then read back, so instances starting together
-- agree on one pair), replaced by `hark admin vapid rotate`.
CREATE TABLE vapid_keys (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  public_key   TEXT NOT NULL,
  private_key  TEXT NOT NULL,
  created_at   BIGINT NOT NULL
);
