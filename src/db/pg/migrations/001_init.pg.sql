-- Hark schema on PostgreSQL, version 1: run before the translation of ../../migrations/001_init.sql
-- (../translate.ts says how SQLite's types become Postgres'; one version line for both engines,
-- test/pg/schema-parity.test.ts checks they describe the same tables).
-- CITEXT (the type of SQLite's TEXT COLLATE NOCASE columns) is a trusted extension
-- (Postgres 13+): the database's owner may create it.
-- `counters` (made by 001) is a row, not a Postgres SEQUENCE: see 006 for why.
CREATE EXTENSION IF NOT EXISTS citext;
