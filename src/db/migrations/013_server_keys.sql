-- Hark schema, version 13: the server's secret keys, shared by every instance on the database.
-- Until now the keys that seal a passkey ceremony's data and key the email codes lived in one
-- process's memory: a ceremony begun on one instance (or before a restart) failed on another.
-- Now each key is a row, made by whichever instance needs it first (INSERT ... ON CONFLICT DO
-- NOTHING, then read back, so instances starting together agree on one). A key seals for one
-- period (a UTC day, `period` = ms since the epoch / 86,400,000) and opens for one more; after
-- that it is erased. Sealed values name their period. Backups leave this table out
-- (docs/decisions.md, "Server keys"). Email codes and passkey challenges made before this were
-- sealed and keyed under a process's memory key, which no instance holds any more: they go.
DELETE FROM email_codes;
DELETE FROM challenges;
CREATE TABLE server_keys (
  purpose     TEXT NOT NULL,
  period      INTEGER NOT NULL,
  key         BLOB NOT NULL,
  created_at  INTEGER NOT NULL,
  PRIMARY KEY (purpose, period)
);
