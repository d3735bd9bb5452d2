-- Hark schema, version 11: sign-in links (issue 19, headless provisioning).
-- `hark admin user add` and `hark admin user link` give a person made on the command line a way
-- in: a one-time link that enrols a passkey for that account. Only the SHA-256 of the link's
-- secret is kept; a person has at most one live link (a new one replaces the old).
CREATE TABLE sign_in_links (
  id          TEXT PRIMARY KEY,
  hash        BLOB NOT NULL UNIQUE,
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL,
  used_at     INTEGER
);
CREATE INDEX sign_in_links_by_user ON sign_in_links(user_id);
