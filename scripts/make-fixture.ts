/**
 * Writes a migration fixture: a database of a released schema version holding representative
 * data, made with that version's migrations only, plus a JSON file of what the test expects
 * to find after upgrading it with the current code.
 *
 *   bun scripts/make-fixture.ts 1     # test/db/fixtures/v1.db and v1.json
 *
 * When a release ships a new schema version N, add `SEEDS[N]` (the same story in that
 * version's tables) and run this once; commit both files. Never regenerate an old fixture:
 * it stands for databases already out there.
 */
import { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { migrations } from '../src/db/migrations/index.ts'

export interface FixtureExpectations {
  version: number
  owner_email: string
  agent_token: string
  revoked_agent_token: string
  person_token: string
  channel_id: string
  messages_in_feed: number
  open_asks: number
  pins: string[]
  channels_of_owner: number
  files: number
}

const sha = (t: string) => createHash('sha256').update(t).digest()
const T0 = 1_760_000_000_000

type Seed = (db: Database) => FixtureExpectations

const SEEDS: Record<number, Seed> = {
  1: (db) => {
    const agent = `hark_agent_${'A'.repeat(43)}`
    const revoked = `hark_agent_${'R'.repeat(43)}`
    const person = `hark_person_${'P'.repeat(43)}`
    const user = db.query(
      'INSERT INTO users (id, email, name, is_owner, created_at) VALUES (?, ?, ?, ?, ?)',
    )
    user.run('usr_owner', 'owner@example.com', 'Owner', 1, T0)
    user.run('usr_other', 'other@example.com', null, 0, T0 + 1)
    const channel = db.query(
      'INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
    )
    channel.run('ch_main', 'usr_owner', 'CI', T0, T0 + 100)
    channel.run('ch_second', 'usr_owner', 'Laptop agent', T0, T0)
    channel.run('ch_other', 'usr_other', 'Other', T0, T0)
    const token = db.query(
      'INSERT INTO tokens (id, kind, hash, user_id, channel_id, label, created_at, last_used_at, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
    )
    token.run('tok_agent', 'agent', sha(agent), 'usr_owner', 'ch_main', null, T0, T0 + 50, null)
    token.run(
      'tok_revoked',
      'agent',
      sha(revoked),
      'usr_owner',
      'ch_second',
      null,
      T0,
      null,
      T0 + 10,
    )
    token.run('tok_person', 'person', sha(person), 'usr_owner', null, 'scripts', T0, null, null)
    let seq = 0
    const msg = db.query(
      `INSERT INTO messages (id, channel_id, seq, sender, body, silent, state, pin_key, ask_status,
         ask_expires_at, ask_answered_at, answer, created_at, updated_at, deleted_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    const add = (
      id: string,
      fields: {
        sender?: string
        body?: unknown
        silent?: number
        state?: string | null
        pin?: string | null
        ask?: string | null
        expires?: number | null
        answeredAt?: number | null
        answer?: unknown
        deleted?: boolean
        channel?: string
      },
    ) => {
      seq++
      const at = T0 + seq * 1000
      msg.run(
        id,
        fields.channel ?? 'ch_main',
        seq,
        fields.sender ?? 'agent',
        fields.deleted ? null : JSON.stringify(fields.body ?? { text: id }),
        fields.silent ?? 0,
        fields.state ?? null,
        fields.pin ?? null,
        fields.ask ?? null,
        fields.expires ?? null,
        fields.answeredAt ?? null,
        fields.answer === undefined ? null : JSON.stringify(fields.answer),
        at,
        at,
        fields.deleted ? at : null,
      )
    }
    const choice = {
      title: 'Deploy?',
      blocks: [{ type: 'choice', id: 'go', options: [{ label: 'Yes' }, { label: 'No' }] }],
    }
    add('msg_plain', { body: { title: 'Build finished', text: 'all green' } })
    add('msg_silent', { body: { text: 'fyi' }, silent: 1 })
    add('msg_open', { body: choice, ask: 'open', expires: 4_102_444_800_000 })
    add('msg_answered', { body: choice, ask: 'answered', answeredAt: T0 + 5000, answer: 'Yes' })
    add('msg_expired', {
      body: { blocks: [{ type: 'toggle', id: 't', label: 'ok', default: true }] },
      ask: 'expired',
      expires: T0 + 6000,
      answer: true,
    })
    add('msg_cancelled', { body: choice, ask: 'cancelled' })
    add('msg_human', { sender: 'human', body: { text: 'please also run lint' }, state: 'working' })
    add('msg_pin', { body: { title: 'Status', text: 'building' }, pin: 'status' })
    add('msg_deleted', { deleted: true })
    add('msg_with_file', {
      body: { blocks: [{ type: 'file', file_id: 'file_log' }] },
    })
    add('msg_elsewhere', { channel: 'ch_other' })
    db.run("UPDATE counters SET value = ? WHERE name = 'change_seq'", [seq])
    db.query(
      'INSERT INTO files (id, channel_id, name, mime, size, sha256, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(
      'file_log',
      'ch_main',
      'build.log',
      'text/plain',
      5,
      createHash('sha256').update('hello').digest('hex'),
      T0,
    )
    return {
      version: 1,
      owner_email: 'owner@example.com',
      agent_token: agent,
      revoked_agent_token: revoked,
      person_token: person,
      channel_id: 'ch_main',
      messages_in_feed: 10,
      open_asks: 1,
      pins: ['status'],
      channels_of_owner: 2,
      files: 1,
    }
  },
}

if (import.meta.main) {
  const version = Number(process.argv[2])
  const seed = SEEDS[version]
  if (!seed) {
    console.error(
      `usage: bun scripts/make-fixture.ts VERSION (one of ${Object.keys(SEEDS).join(', ')})`,
    )
    process.exit(2)
  }
  const dir = join(import.meta.dir, '..', 'test', 'db', 'fixtures')
  const path = join(dir, `v${version}.db`)
  rmSync(path, { force: true })
  const db = new Database(path, { create: true, strict: true })
  db.run('PRAGMA journal_mode = DELETE')
  db.run('PRAGMA foreign_keys = ON')
  db.transaction(() => {
    for (const m of migrations.filter((m) => m.version <= version)) db.run(m.sql)
    db.run(`PRAGMA user_version = ${version}`)
  })()
  const expect = db.transaction(() => seed(db))()
  db.run('VACUUM')
  db.close()
  await Bun.write(join(dir, `v${version}.json`), `${JSON.stringify(expect, null, 2)}\n`)
  Bun.spawnSync([
    process.execPath,
    'x',
    'biome',
    'format',
    '--write',
    join(dir, `v${version}.json`),
  ])
  console.log(`wrote ${path} (schema ${version})`)
}
