-- Hark schema, version 17: approval policies (docs/security.md "Approval policies"). A rule the
-- person signed with a passkey: `claim` (canonical JSON, src/shared/policy.ts) and `proof` (the
-- WebAuthn assertion over its SHA-256), handed as they are to the agents the rule names: the
-- channel's (`channel_id`), or every channel of the person (`channel_id` NULL). A revocation is
-- signed too (`revocation`: its claim and proof, JSON) and is handed out until the policy
-- expires, so an agent learns it. `uses` and `last_used_at` are what agents reported.
CREATE TABLE policies (
  id            TEXT PRIMARY KEY,
  user_id       TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  channel_id    TEXT REFERENCES channels(id) ON DELETE CASCADE,
  claim         TEXT NOT NULL,
  proof         TEXT NOT NULL,
  created_at    INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  revocation    TEXT,
  revoked_at    INTEGER,
  uses          INTEGER NOT NULL DEFAULT 0,
  last_used_at  INTEGER
);
CREATE INDEX policies_user ON policies (user_id, expires_at);
CREATE INDEX policies_channel ON policies (channel_id, expires_at);
