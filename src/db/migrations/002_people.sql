-- Hark schema, version 2: how people get in (setup, sessions, passkeys, email codes,
-- invites) and how agents get tokens (pairing, join links).

-- Small server-wide settings: registration mode, the one-time setup token's hash.
CREATE TABLE settings (
  key    TEXT PRIMARY KEY,
  value  TEXT NOT NULL
) WITHOUT ROWID;

-- Browser sessions; the cookie holds the secret, the table its SHA-256.
CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,
  hash          BLOB NOT NULL UNIQUE,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  user_agent    TEXT,
  created_at    INTEGER NOT NULL,
  last_seen_at  INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL
);
CREATE INDEX sessions_by_user ON sessions(user_id);

CREATE TABLE passkeys (
  id            TEXT PRIMARY KEY,          -- the credential id, base64url
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  public_key    BLOB NOT NULL,
  counter       INTEGER NOT NULL,
  transports    TEXT,                      -- JSON array
  device_type   TEXT,
  backed_up     INTEGER NOT NULL DEFAULT 0,
  name          TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  last_used_at  INTEGER
);
CREATE INDEX passkeys_by_user ON passkeys(user_id);

-- WebAuthn challenges: server-side, single use, short-lived.
CREATE TABLE challenges (
  id          TEXT PRIMARY KEY,
  purpose     TEXT NOT NULL,
  challenge   TEXT NOT NULL,
  data        TEXT,                       -- JSON: what the ceremony is for
  expires_at  INTEGER NOT NULL
);

-- Emailed one-time codes: one live code per address and purpose.
CREATE TABLE email_codes (
  email       TEXT NOT NULL COLLATE NOCASE,
  purpose     TEXT NOT NULL,
  code_hash   BLOB NOT NULL,
  data        TEXT,
  tries       INTEGER NOT NULL DEFAULT 0,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  PRIMARY KEY (email, purpose)
) WITHOUT ROWID;

CREATE TABLE invites (
  id          TEXT PRIMARY KEY,
  hash        BLOB NOT NULL UNIQUE,
  created_by  TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  email       TEXT,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER,
  used_by     TEXT
);

-- The device flow behind `hark init`: the CLI holds the device code, the person sees the user code.
CREATE TABLE pairings (
  id           TEXT PRIMARY KEY,
  device_hash  BLOB NOT NULL UNIQUE,
  user_code    TEXT NOT NULL UNIQUE,
  label        TEXT,
  status       TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'redeemed')),
  user_id      TEXT REFERENCES users(id) ON DELETE CASCADE,
  channel_id   TEXT REFERENCES channels(id) ON DELETE CASCADE,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
);

-- Single-use links behind `hark join`: a new channel, or a new token for an existing one.
CREATE TABLE join_links (
  id          TEXT PRIMARY KEY,
  hash        BLOB NOT NULL UNIQUE,
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id  TEXT REFERENCES channels(id) ON DELETE CASCADE,
  label       TEXT,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
);

-- The person's read position per channel (the last message rid they saw), for unread counts.
ALTER TABLE channels ADD COLUMN read_rid INTEGER NOT NULL DEFAULT 0;
-- Live, unpinned messages by channel: the last message and unread counts in the channel list.
CREATE INDEX messages_live ON messages(channel_id, rid)
  WHERE deleted_at IS NULL AND pin_key IS NULL;
CREATE INDEX messages_live_by_sender ON messages(channel_id, sender, rid)
  WHERE deleted_at IS NULL AND pin_key IS NULL;
