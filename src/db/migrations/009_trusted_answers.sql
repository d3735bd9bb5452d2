-- Hark schema, version 9: trusted answers (PRODUCT.md "Trusted answers").
-- `ask_proof`: the WebAuthn assertion (JSON) the person's passkey made over the answer's claim,
-- handed to the agent with the answer; the agent checks it with the keys it pinned.
ALTER TABLE messages ADD COLUMN ask_proof TEXT;

-- Every decision on an approval (or on a question that asked for proof), appended in the
-- transaction that settles it. Each row's `hash` is SHA-256 of the previous row's hash, a
-- newline and the row's `entry` (canonical JSON), so a row changed, removed or inserted later
-- breaks the chain from there on; `hark admin audit verify` checks it and every signature.
CREATE TABLE audit_log (
  seq         INTEGER PRIMARY KEY,
  at          INTEGER NOT NULL,
  user_id     TEXT NOT NULL,
  channel_id  TEXT NOT NULL,
  message_id  TEXT NOT NULL,
  entry       TEXT NOT NULL,
  prev_hash   TEXT NOT NULL,
  hash        TEXT NOT NULL
);
CREATE INDEX audit_by_channel ON audit_log(channel_id, seq);
