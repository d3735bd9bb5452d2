-- Hark schema, version 4: end-to-end encrypted secret requests.
-- The server sees the agent's public key and, between fulfilment and delivery, the ciphertext;
-- never the secret. The ciphertext is set to NULL the moment it is handed to the agent.
CREATE TABLE secret_requests (
  id            TEXT PRIMARY KEY,
  channel_id    TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  message_id    TEXT NOT NULL,           -- the thread message that shows the request
  name          TEXT NOT NULL,
  description   TEXT,
  public_key    TEXT NOT NULL,           -- base64url of the raw P-256 point
  fingerprint   TEXT NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('pending', 'fulfilled', 'delivered', 'cancelled')),
  ciphertext    TEXT,                    -- only while 'fulfilled'
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  CHECK ((status = 'fulfilled') = (ciphertext IS NOT NULL))
);
CREATE INDEX secret_requests_by_channel ON secret_requests(channel_id, created_at);
