-- Hark schema, version 3: web push.

-- One row per device (browser profile) that asked for notifications. The endpoint is the push
-- service's URL for that device; p256dh and auth are the keys its payloads are encrypted to.
CREATE TABLE push_subscriptions (
  id               TEXT PRIMARY KEY,
  user_id          TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  endpoint         TEXT NOT NULL UNIQUE,
  p256dh           TEXT NOT NULL,
  auth             TEXT NOT NULL,
  name             TEXT,
  user_agent       TEXT,
  created_at       INTEGER NOT NULL,
  last_success_at  INTEGER
);
CREATE INDEX push_subscriptions_by_user ON push_subscriptions(user_id);

-- Pushes waiting to go out, written in the same transaction as their message so that none is
-- lost to a crash. `payload` is the plaintext JSON (encrypted per device when sent).
CREATE TABLE push_queue (
  id               INTEGER PRIMARY KEY,
  subscription_id  TEXT NOT NULL REFERENCES push_subscriptions(id) ON DELETE CASCADE,
  message_id       TEXT,
  payload          TEXT NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,
  due_at           INTEGER NOT NULL,
  -- 1 while a send is in flight (due_at is then the lease's end); cleared at start.
  leased           INTEGER NOT NULL DEFAULT 0,
  created_at       INTEGER NOT NULL
);
CREATE INDEX push_queue_due ON push_queue(due_at);

-- Answering from a notification: single-use capabilities, stored as SHA-256 hashes only.
CREATE TABLE push_capabilities (
  hash        BLOB PRIMARY KEY,
  message_id  TEXT NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  expires_at  INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX push_capabilities_by_message ON push_capabilities(message_id);

-- "Email me questions that wait unanswered for N minutes"; only questions asked after `since`
-- count, so turning it on does not mail every old question at once.
CREATE TABLE push_email_reminders (
  user_id  TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  minutes  INTEGER NOT NULL,
  since    INTEGER NOT NULL
);

-- Questions already reminded by email: one mail per question, ever.
CREATE TABLE push_reminded (
  message_id  TEXT PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
  sent_at     INTEGER NOT NULL
) WITHOUT ROWID;
