// The Postgres schema's migrations (issue 20), embedded in the binary as text like SQLite's
// (../../migrations/index.ts): the number in the file name is the version, and each version is
// the same schema on both engines (test/pg/schema-parity.test.ts).
import m001 from './001_init.sql' with { type: 'text' }
import m002 from './002_people.sql' with { type: 'text' }
import m003 from './003_push.sql' with { type: 'text' }
import m004 from './004_secrets.sql' with { type: 'text' }
import m005 from './005_email_verified.sql' with { type: 'text' }
import m006 from './006_person_cursors.sql' with { type: 'text' }
import m007 from './007_email_codes.sql' with { type: 'text' }
import m008 from './008_approvals.sql' with { type: 'text' }
import m009 from './009_trusted_answers.sql' with { type: 'text' }
import m010 from './010_idempotency.sql' with { type: 'text' }
import m011 from './011_sign_in_links.sql' with { type: 'text' }
import m012 from './012_search.sql' with { type: 'text' }

export const pgMigrations: readonly { version: number; sql: string }[] = [
  { version: 1, sql: m001 },
  { version: 2, sql: m002 },
  { version: 3, sql: m003 },
  { version: 4, sql: m004 },
  { version: 5, sql: m005 },
  { version: 6, sql: m006 },
  { version: 7, sql: m007 },
  { version: 8, sql: m008 },
  { version: 9, sql: m009 },
  { version: 10, sql: m010 },
  { version: 11, sql: m011 },
  { version: 12, sql: m012 },
]

export const pgLatestVersion = pgMigrations.at(-1)?.version ?? 0
