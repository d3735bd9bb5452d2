import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { addPersonToken } from '../../src/people/service.ts'
import { startTestServer, TestClock, type TestServer } from '../harness.ts'
import { AGENT_ROUTES, caller, expectError, label, PERSON_ROUTES, type Route } from './routes.ts'

let s: TestServer
afterEach(() => s?.close())

const call = caller(() => s)

/**
 * A write to the server's database from another connection, as an operator's `sqlite3` or a
 * `hark admin` process makes it: the server sees it at once (its agent-token cache is keyed by
 * `PRAGMA data_version`, which another connection's commit changes). Writes on the server's own
 * connection go through its stores, which empty that cache (test/api/auth-cache.test.ts).
 */
async function operatorWrite(sql: string, ...params: (string | number)[]): Promise<void> {
  // The server's open batch commits first (it shares this test's thread: waiting for its lock
  // here would wait for ever).
  await s.ctx.writes.flush()
  const db = new Database(join(s.dir, 'hark.db'))
  try {
    db.run('PRAGMA busy_timeout = 5000')
    db.run('PRAGMA foreign_keys = ON')
    db.query(sql).run(...params)
  } finally {
    db.close()
  }
}

/** Does the SQLite file (with its WAL and shared memory) contain these bytes anywhere? */
function databaseContains(dir: string, needle: string): boolean {
  const bytes = Buffer.from(needle)
  return ['hark.db', 'hark.db-wal', 'hark.db-shm']
    .map((f) => join(dir, f))
    .filter((f) => existsSync(f))
    .some((f) => readFileSync(f).includes(bytes))
}

describe('revoked tokens', () => {
  test('an agent token whose row is revoked → 401 at once, on every agent route', async () => {
    s = await startTestServer()
    const { token } = await s.addChannel('Soon revoked')
    expect((await call({ method: 'GET', path: '/v1/channel' }, `Bearer ${token}`)).status).toBe(200)
    await operatorWrite('UPDATE tokens SET revoked_at = 1')
    for (const route of AGENT_ROUTES) {
      await expectError(await call(route, `Bearer ${token}`), 401, label(route))
    }
    await s.agent.channel().then(
      () => {
        throw new Error('the harness agent token should be revoked too')
      },
      (e: { status: number }) => expect(e.status).toBe(401),
    )
  })

  test('a revoked person token → 401 at once', async () => {
    s = await startTestServer()
    const person = await addPersonToken(s.ctx, { email: s.ownerEmail })
    const route = PERSON_ROUTES[0] as Route
    expect((await call(route, `Bearer ${person.token}`)).status).toBe(200)
    await operatorWrite(
      'UPDATE tokens SET revoked_at = ?1 WHERE id = ?2',
      Date.now(),
      person.row.id,
    )
    for (const r of PERSON_ROUTES) {
      await expectError(await call(r, `Bearer ${person.token}`), 401, label(r))
    }
    // Other tokens are untouched.
    expect((await s.person.channels()).channels.length).toBeGreaterThan(0)
  })

  test('revoking one channel token leaves the other channels working', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Other')
    await operatorWrite('UPDATE tokens SET revoked_at = 1 WHERE channel_id = ?1', s.channelId)
    expect((await other.agent.channel()).channel.id).toBe(other.channelId)
    expect((await call({ method: 'GET', path: '/v1/channel' })).status).toBe(401)
  })

  test('a token whose channel is gone → 401', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Doomed')
    await operatorWrite('DELETE FROM channels WHERE id = ?1', other.channelId)
    await expectError(
      await call({ method: 'GET', path: '/v1/channel' }, `Bearer ${other.token}`),
      401,
      'deleted channel',
    )
  })
})

describe('token storage', () => {
  test('tokens carry the hark_agent_ / hark_person_ prefixes', async () => {
    s = await startTestServer()
    const agent = (await s.addChannel('Prefix')).token
    const person = (await addPersonToken(s.ctx, { email: s.ownerEmail })).token
    expect(agent).toMatch(/^hark_agent_[0-9A-Za-z]{43}$/)
    expect(person).toMatch(/^hark_person_[0-9A-Za-z]{43}$/)
  })

  test('tokens are stored only as SHA-256 hashes: no plaintext in the SQLite files', async () => {
    s = await startTestServer()
    const agent = (await s.addChannel('Hashed')).token
    const person = (await addPersonToken(s.ctx, { email: s.ownerEmail })).token
    // Use them, so last_used_at and any other write has happened.
    expect((await call({ method: 'GET', path: '/v1/channel' }, `Bearer ${agent}`)).status).toBe(200)
    expect((await call(PERSON_ROUTES[0] as Route, `Bearer ${person}`)).status).toBe(200)

    for (const token of [agent, person]) {
      expect(databaseContains(s.dir, token)).toBe(false)
      // Not even the secret part without its prefix, nor its hex hash as text.
      expect(databaseContains(s.dir, token.replace(/^hark_(agent|person)_/, ''))).toBe(false)
      const digest = createHash('sha256').update(token).digest()
      const row = s.ctx.db
        .query<{ kind: string }, [Uint8Array]>('SELECT kind FROM tokens WHERE hash = ?1')
        .get(new Uint8Array(digest))
      expect(row?.kind).toBe(token.startsWith('hark_agent_') ? 'agent' : 'person')
    }
    // After a checkpoint the main file holds everything; still no plaintext.
    s.ctx.db.run('PRAGMA wal_checkpoint(TRUNCATE)')
    expect(databaseContains(s.dir, agent)).toBe(false)
    expect(databaseContains(s.dir, person)).toBe(false)
  })

  test('every stored hash is 32 bytes', async () => {
    s = await startTestServer()
    await s.addChannel('Sized')
    const rows = s.ctx.db
      .query<{ n: number }, []>('SELECT length(hash) AS n FROM tokens')
      .all()
      .map((r) => r.n)
    expect(rows.length).toBeGreaterThanOrEqual(3)
    expect(rows.every((n) => n === 32)).toBe(true)
  })
})

describe('write rate limit (counted by the agent guard)', () => {
  test('beyond the limit: 429 with Retry-After; reads go on; other channels are independent', async () => {
    const clock = new TestClock(1_000_000)
    s = await startTestServer({ writeLimit: 3, clock })
    const other = await s.addChannel('Other')
    for (let i = 0; i < 3; i++) await s.agent.send({ body: { text: `m${i}` } })
    const res = await call(
      { method: 'POST', path: '/v1/messages', json: { body: { text: 'one more' } } },
      `Bearer ${s.agentToken}`,
    )
    await expectError(res, 429, 'fourth write')
    const retry = Number(res.headers.get('retry-after'))
    expect(Number.isInteger(retry) && retry >= 1).toBe(true)
    // Reads are not writes.
    expect((await s.agent.feed({ peek: true })).messages).toHaveLength(3)
    expect((await s.agent.channel()).channel.id).toBe(s.channelId)
    // Another channel has its own bucket.
    await other.agent.send({ body: { text: 'fine' } })
    // Refused writes wrote nothing.
    expect((await s.agent.feed({ peek: true })).messages).toHaveLength(3)
    // After Retry-After seconds (on the test's clock), writing works again.
    clock.advance(retry * 1000)
    await s.agent.send({ body: { text: 'later' } })
  })

  test('a stranger or a person token does not use up the channel budget', async () => {
    s = await startTestServer({ writeLimit: 1, clock: new TestClock(5_000_000) })
    const person = (await addPersonToken(s.ctx, { email: s.ownerEmail })).token
    const send = { method: 'POST', path: '/v1/messages', json: { body: { text: 'x' } } }
    for (let i = 0; i < 5; i++) {
      expect((await call(send)).status).toBe(401)
      expect((await call(send, `Bearer ${person}`)).status).toBe(403)
    }
    await s.agent.send({ body: { text: 'the one write' } })
  })
})
