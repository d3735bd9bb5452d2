-- Hark schema on PostgreSQL, version 4: mirrors ../../migrations/004_secrets.sql (types: 001).
CREATE TABLE secret_requests (
  id            TEXT PRIMARY KEY,
  channel_id    TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  message_id    TEXT NOT NULL,
  name          TEXT NOT NULL,
  description   TEXT,
  public_key    TEXT NOT NULL,
  fingerprint   TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'fulfilled', 'delivered', 'cancelled')),
  ciphertext    TEXT,
  created_at    BIGINT NOT NULL,
  updated_at    BIGINT NOT NULL,
  CHECK ((status = 'fulfilled') = (ciphertext IS NOT NULL))
);
CREATE INDEX secret_requests_by_channel ON secret_requests(channel_id, created_at);
