-- Hark schema, version 5: whether a person's email address is proven theirs.
-- 1 once the address is vouched for: the owner (set up with the operator's setup token), people
-- added by `hark admin user add`, sign-ups and logins by email code, and passkey sign-ups through
-- an invite bound to that address. A passkey sign-up in open mode or through an unbound invite
-- stays 0 until its first email-code login (see docs/decisions.md, "Email codes").
ALTER TABLE users ADD COLUMN email_verified INTEGER NOT NULL DEFAULT 0;

-- Existing people. How an account was made is not recorded, so: verified unless it looks like a
-- passkey sign-up nobody vouched for, i.e. it is not the owner, did not come through an invite
-- bound to its address, and has a passkey made with the account (a passkey sign-up stores the
-- account and its passkey in one transaction; a passkey added later takes a ceremony, seconds).
-- Accounts made by `hark admin` or by email code have no such passkey.
UPDATE users SET email_verified = 1
WHERE is_owner = 1
   OR EXISTS (SELECT 1 FROM invites i
              WHERE i.used_by = users.id AND i.email IS NOT NULL AND i.email = users.email COLLATE NOCASE)
   OR NOT EXISTS (SELECT 1 FROM passkeys p
                  WHERE p.user_id = users.id AND p.created_at < users.created_at + 1000);
