-- Hark schema, version 15: signed secrets (docs/security.md "Answers that steer an agent").
-- `proof`: the WebAuthn assertion (JSON) the person's passkey made over the SHA-256 of the
-- ciphertext, kept with it while it is `fulfilled` and handed to the agent with it; the agent
-- checks it before it decrypts, so a server cannot pass its own ciphertext off as the person's.
ALTER TABLE secret_requests ADD COLUMN proof TEXT;
