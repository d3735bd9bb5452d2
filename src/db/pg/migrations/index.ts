// The Postgres schema's migrations (issue 20): SQLite's (../../migrations/index.ts), translated
// by ../translate.ts, so each version's ordinary DDL is written once, for both engines. What
// Postgres needs beyond the translation is written here per version, in Postgres, and embedded
// in the binary as text like the migrations themselves. Each version is the same schema on both
// engines (test/pg/schema-parity.test.ts).
import { migrations } from '../../migrations/index.ts'
import { type PgOverride, postgresMigration } from '../translate.ts'
import init from './001_init.pg.sql' with { type: 'text' }
import personCursors from './006_person_cursors.pg.sql' with { type: 'text' }
import trustedAnswers from './009_trusted_answers.pg.sql' with { type: 'text' }
import search from './012_search.pg.sql' with { type: 'text' }
import instances from './014_instances.pg.sql' with { type: 'text' }
import searchOnInsert from './020_search_on_insert.pg.sql' with { type: 'text' }

// 18: SQLite's full-text index is written once per commit (a note per new message, indexed
// before COMMIT). Postgres keeps its trigger of 012: a tsvector row per message in the insert's
// own statement (a GIN insert, without FTS5's cost per statement), in the index at its commit
// (since 20, for a send, the insert's own CTE writes that row: see 020's file).
const searchAsWritten = '-- Hark schema, version 18: nothing on Postgres (see index.ts).'

/**
 * By version. `before`: the citext extension the translation's CITEXT needs (1), and notes on
 * what Postgres' concurrency asks of the stores (6, 9), kept next to the schema they concern.
 * `replace`: search (12), FTS5 on SQLite and a tsvector table under GIN on Postgres; the state
 * instances share (14: rate buckets, the VAPID keys), nothing on SQLite; 18, nothing (above);
 * 20: the search trigger leaves a new message's row the insert wrote itself alone, nothing on
 * SQLite.
 */
const overrides: Readonly<Record<number, PgOverride>> = {
  1: { before: init },
  6: { before: personCursors },
  9: { before: trustedAnswers },
  12: { replace: search },
  14: { replace: instances },
  18: { replace: searchAsWritten },
  20: { replace: searchOnInsert },
}

export const pgMigrations: readonly { version: number; sql: string }[] = migrations.map((m) => ({
  version: m.version,
  sql: postgresMigration(m.sql, m.version, overrides[m.version]),
}))

export const pgLatestVersion = pgMigrations.at(-1)?.version ?? 0
