-- Hark schema on PostgreSQL, version 2: mirrors ../../migrations/002_people.sql (types: 001).

CREATE TABLE settings (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
);

CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,
  hash          BYTEA NOT NULL UNIQUE,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  user_agent    TEXT,
  created_at    BIGINT NOT NULL,
  last_seen_at  BIGINT NOT NULL,
  expires_at    BIGINT NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_id);

CREATE TABLE passkeys (
  id            TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  public_key    BYTEA NOT NULL,
  -- WebAuthn's signature counter is an unsigned 32-bit number: above int4's range.
  counter       BIGINT NOT NULL,
  transports    TEXT,
  device_type   TEXT,
  backed_up     INTEGER NOT NULL DEFAULT 0,
  name          TEXT NOT NULL,
  created_at    BIGINT NOT NULL,
  last_used_at  BIGINT
);
CREATE INDEX passkeys_by_user ON passkeys(user_id);

CREATE TABLE challenges (
  id          TEXT PRIMARY KEY,
  purpose     TEXT NOT NULL,
  challenge   TEXT NOT NULL,
  data        TEXT,
  expires_at  BIGINT NOT NULL
);

-- Replaced in version 7; made here so that every version's schema matches SQLite's.
CREATE TABLE email_codes (
  email       CITEXT NOT NULL,
  purpose     TEXT NOT NULL,
  code_hash   BYTEA NOT NULL,
  data        TEXT,
  tries       INTEGER NOT NULL DEFAULT 0,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  PRIMARY KEY (email, purpose)
);

CREATE TABLE invites (
  id          TEXT PRIMARY KEY,
  hash        BYTEA NOT NULL UNIQUE,
  created_by  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email       TEXT,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  used_at     BIGINT,
  used_by     TEXT
);

CREATE TABLE pairings (
  id           TEXT PRIMARY KEY,
  device_hash  BYTEA NOT NULL UNIQUE,
  user_code    TEXT NOT NULL UNIQUE,
  label        TEXT,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
  user_id      TEXT REFERENCES users(id) ON DELETE CASCADE,
  channel_id   TEXT REFERENCES channels(id) ON DELETE CASCADE,
  created_at   BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL
);

CREATE TABLE join_links (
  id          TEXT PRIMARY KEY,
  hash        BYTEA NOT NULL UNIQUE,
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id  TEXT REFERENCES channels(id) ON DELETE CASCADE,
  label       TEXT,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  used_at     BIGINT
);

-- The person's read position per channel (a message rid; see 006 for rid's order).
ALTER TABLE channels ADD COLUMN read_rid BIGINT NOT NULL DEFAULT 0;
CREATE INDEX messages_live ON messages(channel_id, rid)
  WHERE deleted_at IS NULL AND pin_key IS NULL;
CREATE INDEX messages_live_by_sender ON messages(channel_id, sender, rid)
  WHERE deleted_at IS NULL AND pin_key IS NULL;
