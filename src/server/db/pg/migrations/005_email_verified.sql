-- Hark schema on PostgreSQL, version 5: mirrors ../../migrations/005_email_verified.sql.
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;

-- The same backfill as on SQLite, so the two stay one version line even for a database brought
-- up step by step. (`invites.email` is TEXT, `users.email` CITEXT: the comparison is CITEXT's,
-- case-insensitive, like SQLite's COLLATE NOCASE.)
UPDATE users SET email_verified = 1
WHERE is_owner = 1
   OR EXISTS (SELECT 1 FROM invites i
              WHERE i.used_by = users.id AND i.email IS NOT NULL AND i.email::citext = users.email)
   OR NOT EXISTS (SELECT 1 FROM passkeys p
                  WHERE p.user_id = users.id AND p.created_at < users.created_at + 1000);
