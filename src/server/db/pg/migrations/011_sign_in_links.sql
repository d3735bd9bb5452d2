-- Hark schema on PostgreSQL, version 11: mirrors ../../migrations/011_sign_in_links.sql.
CREATE TABLE sign_in_links (
  id          TEXT PRIMARY KEY,
  hash        BYTEA NOT NULL UNIQUE,
  user_id     TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL,
  used_at     BIGINT
);
CREATE INDEX sign_in_links_by_user ON sign_in_links(user_id);
