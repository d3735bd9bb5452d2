-- Hark schema, version 1.
-- People own channels; each channel is one agent's conversation with its person.

CREATE TABLE users (
  id          TEXT PRIMARY KEY,
  email       TEXT NOT NULL UNIQUE COLLATE NOCASE,
  name        TEXT,
  is_owner    INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL
);

CREATE TABLE channels (
  id          TEXT PRIMARY KEY,
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  label       TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX channels_by_user ON channels(user_id, created_at);

-- Secrets are stored only as SHA-256 hashes; `kind` says which side of the API a token opens.
CREATE TABLE tokens (
  id            TEXT PRIMARY KEY,
  kind          TEXT NOT NULL CHECK (kind IN ('agent', 'person')),
  hash          BLOB NOT NULL UNIQUE,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id    TEXT REFERENCES channels(id) ON DELETE CASCADE,
  label         TEXT,
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER,
  revoked_at    INTEGER,
  CHECK ((kind = 'agent') = (channel_id IS NOT NULL))
);
CREATE INDEX tokens_by_user ON tokens(user_id);
CREATE INDEX tokens_by_channel ON tokens(channel_id);

-- One global change sequence. Every change to a message takes the next value, so a reader's
-- cursor never skips a change, even when other channels are deleted.
CREATE TABLE counters (
  name   TEXT PRIMARY KEY,
  value  INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES ('change_seq', 0);

CREATE TABLE messages (
  rid              INTEGER PRIMARY KEY,
  id               TEXT NOT NULL UNIQUE,
  channel_id       TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  seq              INTEGER NOT NULL,
  sender           TEXT NOT NULL CHECK (sender IN ('agent', 'human')),
  body             TEXT,               -- JSON; NULL once deleted
  silent           INTEGER NOT NULL DEFAULT 0,
  state            TEXT CHECK (state IN ('seen', 'working', 'done')),
  pin_key          TEXT,
  ask_status       TEXT CHECK (ask_status IN ('open', 'answered', 'expired', 'cancelled')),
  ask_expires_at   INTEGER,
  ask_answered_at  INTEGER,
  answer           TEXT,               -- JSON
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL,
  deleted_at       INTEGER
);
CREATE UNIQUE INDEX messages_by_seq ON messages(seq);
CREATE INDEX messages_feed ON messages(channel_id, seq);
CREATE INDEX messages_feed_by_sender ON messages(channel_id, sender, seq);
CREATE UNIQUE INDEX messages_pins ON messages(channel_id, pin_key) WHERE pin_key IS NOT NULL;
CREATE INDEX messages_open_asks ON messages(channel_id, rid) WHERE ask_status = 'open';
CREATE INDEX messages_expiring ON messages(ask_expires_at)
  WHERE ask_status = 'open' AND ask_expires_at IS NOT NULL;

CREATE TABLE files (
  id          TEXT PRIMARY KEY,
  channel_id  TEXT NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
  name        TEXT NOT NULL,
  mime        TEXT NOT NULL,
  size        INTEGER NOT NULL,
  sha256      TEXT NOT NULL,
  created_at  INTEGER NOT NULL
);
CREATE INDEX files_by_channel ON files(channel_id, created_at);
