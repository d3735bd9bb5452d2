import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { migrate } from '../../src/db/database.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'
import {
  type Column,
  postgresShape,
  type SchemaShape,
  sqliteShape,
  type TableShape,
} from './schema-shape.ts'

// One version line, two engines (issue 20): after every migration, SQLite's schema and
// Postgres' describe the same tables, columns, keys and indexes, up to the type mapping below
// (src/db/pg/translate.ts and docs/scaling.md say why; this is a second, independent
// copy of it, so a wrong translation rule fails here) and the differences allowed by name.
const skip = skipWithoutPostgres()

// SQLite INTEGER columns that are INTEGER (int4) on Postgres: 0/1 flags and small bounded
// counts. Every other INTEGER is BIGINT (ms timestamps, ids, sequences, sizes, counters).
const INT4 = new Set([
  'users.is_owner',
  'users.email_verified',
  'messages.silent',
  'passkeys.backed_up',
  'push_queue.leased',
  'push_queue.attempts',
  'push_email_reminders.minutes',
  'email_codes.tries',
  'email_codes.other_tries',
  'idempotency_keys.status',
])
// TEXT COLLATE NOCASE on SQLite (not visible to PRAGMA table_info): CITEXT on Postgres.
const CITEXT = new Set(['users.email', 'email_codes.email'])

// The intended differences, by name. Nothing else may differ.
// - FTS5's index: the virtual table and the shadow tables FTS5 keeps it in (SQLite only); on
//   Postgres the table `message_search` (tsvector + GIN, pg migration 012) instead.
// - `schema_version`: the Postgres runner's record of applied versions; SQLite keeps its
//   version in PRAGMA user_version, outside any table.
// The change feed's counter needs no entry: on both engines it is the person's row
// (users.change_seq, migration 006), the same column; only how Postgres' transactions queue on
// its lock differs (pg migration 006, test/pg/feed-order.test.ts).
const SQLITE_ONLY = [
  'message_fts',
  'message_fts_config',
  'message_fts_content',
  'message_fts_data',
  'message_fts_docsize',
  'message_fts_idx',
  'message_fts_pending', // the notes of messages to index at commit (migration 018)
]
// - `rate_buckets`, `vapid_keys` (pg migration 014): what several instances share, kept in
//   memory (the write limit) and in the data directory (vapid.json) by one embedded server.
const POSTGRES_ONLY = ['message_search', 'schema_version', 'rate_buckets', 'vapid_keys']

function pgType(table: string, c: Column): string {
  const key = `${table}.${c.name}`
  if (c.type === 'BLOB') return 'bytea'
  if (c.type === 'TEXT') return CITEXT.has(key) ? 'citext' : 'text'
  if (c.type === 'INTEGER') return INT4.has(key) ? 'int4' : 'int8'
  throw new Error(`no Postgres type mapped for ${key} (${c.type})`)
}

/** What SQLite's table should look like on Postgres, by the mapping above. */
function expectedOnPostgres(name: string, t: TableShape): TableShape {
  return { ...t, columns: t.columns.map((c) => ({ ...c, type: pgType(name, c) })) }
}

describe.skipIf(skip)('SQLite and Postgres schemas', () => {
  let cluster: PgCluster
  let pg: SQL
  let lite: Database
  let sqlite: SchemaShape
  let postgres: SchemaShape

  beforeAll(async () => {
    cluster = await startCluster()
    pg = new SQL(await cluster.database('parity'), { max: 2 })
    await migratePostgres(pg)
    lite = new Database(':memory:', { strict: true })
    lite.run('PRAGMA foreign_keys = ON')
    migrate(lite)
    sqlite = sqliteShape(lite)
    postgres = await postgresShape(pg)
  }, 60_000)
  afterAll(async () => {
    lite?.close()
    await pg?.close({ timeout: 0 })
    await cluster?.close()
  }, 60_000)

  test('the same tables, apart from the allowed differences', () => {
    const liteTables = Object.keys(sqlite.tables).sort()
    const pgTables = Object.keys(postgres.tables).sort()
    for (const t of SQLITE_ONLY) expect(liteTables).toContain(t)
    for (const t of POSTGRES_ONLY) expect(pgTables).toContain(t)
    expect(pgTables.filter((t) => !POSTGRES_ONLY.includes(t))).toEqual(
      liteTables.filter((t) => !SQLITE_ONLY.includes(t)),
    )
    expect(postgres.views).toEqual(sqlite.views)
  })

  test('every shared table: columns, types, NOT NULL, defaults, keys and indexes', () => {
    const shared = Object.keys(sqlite.tables).filter((t) => !SQLITE_ONLY.includes(t))
    expect(shared.length).toBeGreaterThan(20)
    for (const name of shared) {
      const lite = sqlite.tables[name]
      if (!lite) throw new Error(`no table ${name}`)
      // Compared per table, so a failure names the table.
      expect({ [name]: postgres.tables[name] }).toEqual({ [name]: expectedOnPostgres(name, lite) })
    }
  })

  test('every mapped column exists (the mapping lists no stale names)', () => {
    for (const key of [...INT4, ...CITEXT]) {
      const [table, column] = key.split('.')
      const c = sqlite.tables[table ?? '']?.columns.find((x) => x.name === column)
      expect({ key, type: c?.type }).toEqual({ key, type: INT4.has(key) ? 'INTEGER' : 'TEXT' })
    }
    // PRAGMA table_info does not show a collation: read NOCASE columns from the CREATE text.
    const nocase = new Set<string>()
    const defs = lite
      .query<{ name: string; sql: string }, []>(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table'",
      )
      .all()
    for (const d of defs) {
      for (const m of d.sql.matchAll(/(\w+)\s+TEXT\b[^,\n]*COLLATE NOCASE/gi))
        nocase.add(`${d.name}.${m[1]}`)
    }
    expect([...nocase].sort()).toEqual([...CITEXT].sort())
  })

  test('search finds a message by the same text on both engines', async () => {
    // The view `message_search_text` is the one statement of what is indexed; on Postgres it is
    // rebuilt without json_tree, so check it yields the same text for the same messages.
    const now = 1
    lite.run("INSERT INTO users (id, email, created_at) VALUES ('u', 'u@x.org', 1)")
    lite.run(
      "INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES ('c', 'u', 'l', 1, 1)",
    )
    await pg`INSERT INTO users (id, email, created_at) VALUES ('u', 'u@x.org', 1)`
    await pg`INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES ('c', 'u', 'l', 1, 1)`
    const samples: { body: string | null; answer?: string; deleted?: boolean }[] = [
      {
        body: JSON.stringify({
          title: 'Déploy to prod?',
          text: 'The release \u0002marked\u0003 is ready',
          url: 'https://example.org/not-indexed',
          blocks: [
            { type: 'markdown', text: '**bold** words' },
            {
              type: 'table',
              columns: ['Host', 'State'],
              rows: [
                ['web-1', 'up'],
                ['web-2', 'down'],
              ],
            },
            { type: 'html', html: '<b>never indexed</b>' },
            { type: 'html', html: { text: 'nested under html' } },
            { type: 'keyvalue', items: [{ key: 'region', value: 'eu-west' }] },
            { type: 'approval', tool: 'Bash', input: { command: 'rm -rf build' } },
            { type: 'choice', options: [{ label: 'Ship it', value: 'ship' }], n: 3 },
          ],
          'odd key': { text: 'under a quoted key' },
        }),
        answer: JSON.stringify({
          decision: 'allow',
          scope: 'session',
          text: 'go ahead',
          more: ['a', 'b'],
        }),
      },
      { body: JSON.stringify({ text: 'plain' }), answer: JSON.stringify('yes please') },
      { body: JSON.stringify({ text: 'bad answer' }), answer: 'not json' },
      { body: 'not json at all' },
      { body: JSON.stringify({ text: 'gone' }), deleted: true },
      { body: null, deleted: true },
    ]
    for (const [i, s] of samples.entries()) {
      const row = [`m${i}`, i + 1, s.body, s.answer ?? null, s.deleted ? now : null]
      lite
        .query(
          `INSERT INTO messages (id, channel_id, seq, sender, body, answer, deleted_at, created_at, updated_at)
           VALUES (?1, 'c', ?2, 'agent', ?3, ?4, ?5, 1, 1)`,
        )
        .run(...(row as [string, number, string | null, string | null, number | null]))
      await pg.unsafe(
        `INSERT INTO messages (id, channel_id, seq, sender, body, answer, deleted_at, created_at, updated_at)
         VALUES ($1, 'c', $2, 'agent', $3, $4, $5, 1, 1)`,
        row,
      )
    }
    const fromLite = lite
      .query<{ id: string; title: string; body: string }, []>(
        'SELECT m.id, t.title, t.body FROM message_search_text t JOIN messages m USING (rid) ORDER BY m.id',
      )
      .all()
    const fromPg: { id: string; title: string; body: string }[] = await pg`
      SELECT m.id, t.title, t.body FROM message_search_text t JOIN messages m USING (rid)
      ORDER BY m.id`
    expect(fromLite.map((r) => r.id)).toEqual(['m0', 'm1', 'm2'])
    expect(fromPg.map((r) => ({ ...r }))).toEqual(fromLite)
    // And the index itself finds the first by a word of each part, accents folded, prefix too.
    for (const q of ['deploy', 'web:*', 'eu', 'ahead', 'ship']) {
      const hits = await pg`SELECT m.id FROM message_search s JOIN messages m USING (rid)
        WHERE s.document @@ to_tsquery('simple', unaccent(${q}))`
      expect({ q, hits: hits.map((h: { id: string }) => h.id) }).toEqual({ q, hits: ['m0'] })
    }
    // A delete takes its index row with it (ON DELETE CASCADE, no trigger).
    await pg`DELETE FROM messages WHERE id = 'm0'`
    const [left] = await pg`SELECT count(*) AS n FROM message_search`
    expect(Number(left.n)).toBe(2)
  })
})
