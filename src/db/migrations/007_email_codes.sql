-- Hark schema, version 7: several live email codes per address.
-- A new code no longer replaces the one already mailed: whoever asks for the next one (a stranger
-- can ask for any address), the mailbox's owner may be typing the earlier one. Each code is its
-- own row with its own lifetime and tries; the right one consumes them all.
-- `asked_from` tags the client address that asked for the code (an HMAC under the in-memory key,
-- not the address itself): wrong tries from there (`tries`) and from anywhere else together
-- (`other_tries`) are counted apart, so a stranger's guesses cannot use up the person's own tries.
-- Codes are keyed under a key that lives only in the server's memory, so none survives the
-- restart that runs this migration: the old table is dropped, not copied.
DROP TABLE email_codes;
CREATE TABLE email_codes (
  id           TEXT PRIMARY KEY,
  email        TEXT NOT NULL COLLATE NOCASE,
  purpose      TEXT NOT NULL,
  code_hash    BLOB NOT NULL,
  data         TEXT NOT NULL,
  asked_from   BLOB NOT NULL,
  tries        INTEGER NOT NULL DEFAULT 0,
  other_tries  INTEGER NOT NULL DEFAULT 0,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL
);
CREATE INDEX email_codes_by_address ON email_codes(email, purpose);
CREATE INDEX email_codes_expiring ON email_codes(expires_at);
