import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { FixtureExpectations } from '../../scripts/make-fixture.ts'
import { openDatabase, schemaVersion } from '../../src/db/database.ts'
import { latestVersion, migrations } from '../../src/db/migrations/index.ts'
import { failsWith, startTestServer, tempDir } from '../harness.ts'

/**
 * Upgrades: a database from every released schema version (test/db/fixtures/vN.db, made by
 * `bun scripts/make-fixture.ts N` when N shipped) opens with the current code, is migrated to
 * the latest version, passes the integrity checks, and still serves its data.
 */
const FIXTURES = join(import.meta.dir, 'fixtures')
const versions = readdirSync(FIXTURES)
  .map((f) => /^v(\d+)\.db$/.exec(f)?.[1])
  .filter((v): v is string => v !== undefined)
  .map(Number)
  .sort((a, b) => a - b)

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test('there is a fixture for the first released schema, and one per version since', () => {
  // Version 1 shipped in 0.1.0. A version above the newest fixture is unreleased (it may still
  // change); releasing it means adding its fixture, after which this keeps it there.
  expect(versions[0]).toBe(1)
  expect(versions).toEqual(versions.map((_, i) => i + 1))
  expect(versions.at(-1)).toBeLessThanOrEqual(latestVersion)
})

for (const version of versions) {
  describe(`schema v${version} fixture`, () => {
    const expected = JSON.parse(
      readFileSync(join(FIXTURES, `v${version}.json`), 'utf8'),
    ) as FixtureExpectations
    const dir = tempDir('hark-migrate-')
    dirs.push(dir)
    const path = join(dir, 'hark.db')
    copyFileSync(join(FIXTURES, `v${version}.db`), path)

    test('is what it says it is', () => {
      const raw = new Database(path, { readonly: true })
      expect(schemaVersion(raw)).toBe(version)
      expect(expected.version).toBe(version)
      raw.close()
    })

    test('migrates to the latest version with integrity and foreign keys intact', () => {
      const db = openDatabase(path)
      expect(schemaVersion(db)).toBe(latestVersion)
      expect(db.query('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }])
      expect(db.query('PRAGMA foreign_key_check').all()).toEqual([])
      db.close()
      // Opening again is a no-op.
      const again = openDatabase(path)
      expect(schemaVersion(again)).toBe(latestVersion)
      again.close()
    })

    test('serves its data after the upgrade', async () => {
      // The old data dir as it is: nobody provisioned on top of what it holds.
      const s = await startTestServer({ dataDir: dir, owner: false })
      try {
        const agent = s.agentClient(expected.agent_token)
        const feed = await agent.feed({ since: 0 })
        expect(feed.messages).toHaveLength(expected.messages_in_feed)
        expect((await agent.asks()).asks).toHaveLength(expected.open_asks)
        expect((await agent.pins()).pins.map((p) => p.key)).toEqual(expected.pins)
        expect((await agent.channel()).channel.id).toBe(expected.channel_id)
        await failsWith(s.agentClient(expected.revoked_agent_token).feed({}), 401)
        const person = s.personClient(expected.person_token)
        expect((await person.channels()).channels).toHaveLength(expected.channels_of_owner)
        expect(s.ctx.db.query('SELECT count(*) AS n FROM files').get()).toEqual({
          n: expected.files,
        })
        // And it takes new writes.
        const { message } = await agent.send({ body: { text: 'after the upgrade' } })
        const next = await agent.feed({ since: feed.cursor })
        expect(next.messages.map((m) => m.id)).toEqual([message.id])
      } finally {
        await s.stop()
      }
    })
  })
}

describe('v5: users.email_verified for the people already there', () => {
  test('verified unless the account looks like a passkey sign-up nobody vouched for', () => {
    const dir = tempDir('hark-migrate-')
    dirs.push(dir)
    const path = join(dir, 'hark.db')
    // A database at version 4, as the last release left it.
    const old = new Database(path, { strict: true })
    for (const m of migrations.filter((m) => m.version <= 4)) old.run(m.sql)
    old.run('PRAGMA user_version = 4')
    const T = 1_700_000_000_000
    const user = (id: string, owner = 0) =>
      old.run('INSERT INTO users (id, email, is_owner, created_at) VALUES (?1, ?2, ?3, ?4)', [
        id,
        `${id}@example.com`,
        owner,
        T,
      ])
    const passkey = (userId: string, createdAt: number) =>
      old.run(
        `INSERT INTO passkeys (id, user_id, public_key, counter, name, created_at)
         VALUES (?1, ?2, x'00', 0, 'Passkey', ?3)`,
        [`cred-${userId}-${createdAt}`, userId, createdAt],
      )
    const invite = (usedBy: string, email: string | null) =>
      old.run(
        `INSERT INTO invites (id, hash, created_by, email, created_at, expires_at, used_at, used_by)
         VALUES (?1, randomblob(32), 'owner', ?2, ?3, ?4, ?3, ?1)`,
        [usedBy, email, T, T + 1],
      )
    user('owner', 1)
    passkey('owner', T) // set up with a passkey: still verified (the setup token)
    user('admin_made') // by `hark admin user add`, or by email code: no passkey
    user('email_then_passkey')
    passkey('email_then_passkey', T + 60_000) // added later in settings
    user('open_passkey')
    passkey('open_passkey', T + 3) // made with the account: a passkey sign-up
    user('bound')
    passkey('bound', T)
    invite('bound', 'BOUND@example.com')
    user('unbound')
    passkey('unbound', T)
    invite('unbound', null)
    old.close()

    const db = openDatabase(path)
    const rows = db
      .query<{ id: string; email_verified: number }, []>(
        'SELECT id, email_verified FROM users ORDER BY id',
      )
      .all()
    expect(Object.fromEntries(rows.map((r) => [r.id, r.email_verified]))).toEqual({
      admin_made: 1,
      bound: 1,
      email_then_passkey: 1,
      open_passkey: 0,
      owner: 1,
      unbound: 0,
    })
    expect(db.query('PRAGMA foreign_key_check').all()).toEqual([])
    db.close()
  })
})

describe('v6: one change sequence per person', () => {
  test('every person continues from the old counter: an old cursor gets exactly the newer changes', async () => {
    const dir = tempDir('hark-migrate-')
    dirs.push(dir)
    const path = join(dir, 'hark.db')
    // A database at version 5 whose counter is shared by Alice and Bob.
    const old = new Database(path, { strict: true })
    for (const m of migrations.filter((m) => m.version <= 5)) old.run(m.sql)
    old.run('PRAGMA user_version = 5')
    const T = 1_700_000_000_000
    const sha = (t: string) => new Bun.CryptoHasher('sha256').update(t).digest()
    const secret = (kind: string, c: string) => `hark_${kind}_${c.repeat(43)}`
    for (const [user, channel, c] of [
      ['usr_alice', 'ch_alice', 'A'],
      ['usr_bob', 'ch_bob', 'B'],
    ] as const) {
      old.run('INSERT INTO users (id, email, created_at) VALUES (?1, ?2, ?3)', [
        user,
        `${user}@example.com`,
        T,
      ])
      old.run(
        'INSERT INTO channels (id, user_id, label, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)',
        [channel, user, channel, T],
      )
      old.run(
        `INSERT INTO tokens (id, kind, hash, user_id, channel_id, created_at)
         VALUES (?1, 'agent', ?2, ?3, ?4, ?5), (?6, 'person', ?7, ?3, NULL, ?5)`,
        [
          `tok_agent_${c}`,
          sha(secret('agent', c)),
          user,
          channel,
          T,
          `tok_person_${c}`,
          sha(secret('person', c)),
        ],
      )
    }
    const message = (id: string, channel: string, seq: number, text: string) =>
      old.run(
        `INSERT INTO messages (id, channel_id, seq, sender, body, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'agent', ?4, ?5, ?5)`,
        [id, channel, seq, JSON.stringify({ text }), T + seq],
      )
    message('msg_a1', 'ch_alice', 1, 'a1')
    message('msg_b2', 'ch_bob', 2, 'b2')
    message('msg_a3', 'ch_alice', 3, 'a3')
    // A client of Alice's holds cursor 3 (her feed answered up to here); Bob's holds 2.
    message('msg_b4', 'ch_bob', 4, 'b4')
    message('msg_a5', 'ch_alice', 5, 'a5')
    // a1 edited: the change takes number 6 and the row moves there.
    old.run(`UPDATE messages SET seq = 6, body = '{"text":"a1, edited"}' WHERE id = 'msg_a1'`)
    old.run("UPDATE counters SET value = 6 WHERE name = 'change_seq'")
    old.close()

    const s = await startTestServer({ dataDir: dir, owner: false })
    const { ctx } = s
    try {
      expect(schemaVersion(ctx.db)).toBe(latestVersion)
      expect(ctx.db.query('SELECT id, change_seq FROM users ORDER BY id').all()).toEqual([
        { id: 'usr_alice', change_seq: 6 },
        { id: 'usr_bob', change_seq: 6 },
      ])
      // No renumbering: every row keeps its number.
      expect(ctx.db.query('SELECT id, seq FROM messages ORDER BY seq').all()).toEqual([
        { id: 'msg_b2', seq: 2 },
        { id: 'msg_a3', seq: 3 },
        { id: 'msg_b4', seq: 4 },
        { id: 'msg_a5', seq: 5 },
        { id: 'msg_a1', seq: 6 },
      ])
      const indexes = ctx.db
        .query<{ name: string; unique: number }, []>(
          "SELECT name, \"unique\" FROM pragma_index_list('messages') WHERE name LIKE 'messages_%'",
        )
        .all()
      expect(indexes.find((i) => i.name === 'messages_by_seq')).toBeUndefined()
      expect(indexes.find((i) => i.name === 'messages_feed')?.unique).toBe(1)
      expect(ctx.db.query('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }])

      const alice = s.personClient(secret('person', 'A'))
      const aliceAgent = s.agentClient(secret('agent', 'A'))
      const bob = s.personClient(secret('person', 'B'))
      const bobsAgent = s.agentClient(secret('agent', 'B'))
      const personFeed = (p: typeof alice, since: number) =>
        p.call<{ messages: { id: string }[]; cursor: number; has_more: boolean }>(
          'GET',
          '/v1/app/feed',
          { query: { since: String(since) } },
        )
      const ids = (r: { messages: { id: string }[] }) => r.messages.map((m) => m.id)

      // From the cursors clients held before the upgrade: exactly the newer changes, once.
      const fromAlice = await personFeed(alice, 3)
      expect(ids(fromAlice)).toEqual(['msg_a5', 'msg_a1'])
      expect(fromAlice.cursor).toBe(6)
      expect(ids(await aliceAgent.feed({ since: 3, peek: true }))).toEqual(['msg_a5', 'msg_a1'])
      expect(ids(await personFeed(bob, 2))).toEqual(['msg_b4'])
      expect((await personFeed(bob, 2)).cursor).toBe(6)

      // New changes are numbered after every old cursor, each person on their own.
      const a7 = (await aliceAgent.send({ body: { text: 'a7' } })).message
      expect(ids(await personFeed(alice, fromAlice.cursor))).toEqual([a7.id])
      expect((await personFeed(alice, fromAlice.cursor)).cursor).toBe(7)
      expect((await bob.channels()).cursor).toBe(6)
      const b7 = (await bobsAgent.send({ body: { text: 'b7' } })).message
      expect(ids(await personFeed(bob, 6))).toEqual([b7.id])
      expect((await bobsAgent.feed({ since: 6, peek: true })).cursor).toBe(7)
    } finally {
      await s.stop()
    }
  })
})
