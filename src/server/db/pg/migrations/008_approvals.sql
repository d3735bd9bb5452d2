-- Hark schema on PostgreSQL, version 8: mirrors ../../migrations/008_approvals.sql.
ALTER TABLE messages ADD COLUMN ask_request_hash TEXT;
ALTER TABLE messages ADD COLUMN ask_reason TEXT;
