// Migrations are embedded in the binary as text; the number in the file name is the version.
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
import m013 from './013_server_keys.sql' with { type: 'text' }
import m014 from './014_instances.sql' with { type: 'text' }
import m015 from './015_secret_proofs.sql' with { type: 'text' }
import m016 from './016_pairing_origin.sql' with { type: 'text' }
import m017 from './017_policies.sql' with { type: 'text' }
import m018 from './018_search_pending.sql' with { type: 'text' }
import m019 from './019_sender_indexes.sql' with { type: 'text' }
import m020 from './020_search_on_insert.sql' with { type: 'text' }

// In version order, so a file's place in the list is its version (the number in its name).
export const migrations: readonly { version: number; sql: string }[] = [
  m001,
  m002,
  m003,
  m004,
  m005,
  m006,
  m007,
  m008,
  m009,
  m010,
  m011,
  m012,
  m013,
  m014,
  m015,
  m016,
  m017,
  m018,
  m019,
  m020,
].map((sql, i) => ({ version: i + 1, sql }))

export const latestVersion = migrations.at(-1)?.version ?? 0
