-- Hark schema on PostgreSQL, version 7: mirrors ../../migrations/007_email_codes.sql.
DROP TABLE email_codes;
CREATE TABLE email_codes (
  id           TEXT PRIMARY KEY,
  email        CITEXT NOT NULL,
  purpose      TEXT NOT NULL,
  code_hash    BYTEA NOT NULL,
  data         TEXT NOT NULL,
  asked_from   BYTEA NOT NULL,
  tries        INTEGER NOT NULL DEFAULT 0,
  other_tries  INTEGER NOT NULL DEFAULT 0,
  created_at   BIGINT NOT NULL,
  expires_at   BIGINT NOT NULL
);
CREATE INDEX email_codes_by_address ON email_codes(email, purpose);
CREATE INDEX email_codes_expiring ON email_codes(expires_at);
