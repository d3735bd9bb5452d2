import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { copyFileSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { FixtureExpectations } from '../../scripts/make-fixture.ts'
import { createAgentClient, createPersonClient } from '../../src/client/client.ts'
import { openDatabase, schemaVersion } from '../../src/db/database.ts'
import { latestVersion, migrations } from '../../src/db/migrations/index.ts'
import { buildApp } from '../../src/server/app.ts'
import { DEFAULTS } from '../../src/server/config.ts'
import { closeContext, createContext } from '../../src/server/context.ts'
import { silentLogger } from '../../src/server/log.ts'
import { failsWith, tempDir } from '../harness.ts'

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
      const ctx = createContext(
        {
          ...DEFAULTS,
          dataDir: dir,
          host: '127.0.0.1',
          port: 0,
          baseUrl: 'http://hark.test',
          writeLimit: 0,
        },
        { log: silentLogger },
      )
      try {
        const app = buildApp(ctx)
        const fetch = (r: Request) => app.handle(r)
        const opts = (token: string) => ({ baseUrl: 'http://hark.test', token, fetch })
        const agent = createAgentClient(opts(expected.agent_token))
        const feed = await agent.feed({ since: 0 })
        expect(feed.messages).toHaveLength(expected.messages_in_feed)
        expect((await agent.asks()).asks).toHaveLength(expected.open_asks)
        expect((await agent.pins()).pins.map((p) => p.key)).toEqual(expected.pins)
        expect((await agent.channel()).channel.id).toBe(expected.channel_id)
        await failsWith(createAgentClient(opts(expected.revoked_agent_token)).feed({}), 401)
        const person = createPersonClient(opts(expected.person_token))
        expect((await person.channels()).channels).toHaveLength(expected.channels_of_owner)
        expect(ctx.db.query('SELECT count(*) AS n FROM files').get()).toEqual({
          n: expected.files,
        })
        // And it takes new writes.
        const { message } = await agent.send({ body: { text: 'after the upgrade' } })
        const next = await agent.feed({ since: feed.cursor })
        expect(next.messages.map((m) => m.id)).toEqual([message.id])
      } finally {
        closeContext(ctx)
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
