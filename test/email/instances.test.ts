import { Database } from 'bun:sqlite'
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { KEY_PERIOD_MS } from '../../src/access/keys/keyring.ts'
import { hashToken, newId } from '../../src/core/ids.ts'
import { MAX_OTHER_TRIES } from '../../src/people/enrol/email/codes.ts'
import { sleep, startTestServer, type TestServer } from '../harness.ts'
import { type EmailServer, OWNER, otherCode, startEmailServer } from './harness.ts'

/**
 * Email codes whichever instance gets each request (issue 20): a code asked on one server is
 * checked on another on the same data, or on the same one restarted. Its hash, its asker's tag
 * and its sealed data are keyed with the keys in the database; before, with a process's own.
 */
let s: EmailServer
let other: TestServer | undefined
beforeEach(async () => {
  s = await startEmailServer({ trustProxy: true })
})
afterEach(async () => {
  await other?.stop()
  other = undefined
  await s.close()
})

const PERSON = '203.0.113.5'
const STRANGER = '198.51.100.66'

/**
 * A second instance on the same data, clock and mail trap. Its start-up writes are let finish
 * before the first takes a request: both run in this thread, where one's open batch would make
 * the other wait for a lock only this thread could release.
 */
async function secondInstance(): Promise<TestServer> {
  other = await startTestServer({
    owner: false,
    trustProxy: true,
    clock: s.clock,
    mailer: s.trap,
    dataDir: s.dir,
  })
  await sleep(20)
  return other
}

type Server = Pick<TestServer, 'request'>
const post = async (server: Server, path: string, json: object, ip = PERSON) => {
  const reply = await server.request('POST', path, {
    json,
    origin: null,
    headers: { 'x-forwarded-for': ip },
  })
  return { status: reply.status, body: reply.body ?? {} }
}
const ask = async (server: Server, email = OWNER, purpose = 'login', extra = {}, ip = PERSON) => {
  const started = await post(server, '/v1/auth/email/start', { email, purpose, ...extra }, ip)
  expect(started.status).toBe(200)
  return (await s.trap.next(email)).code
}
const verify = (server: Server, code: string, email = OWNER, purpose = 'login', ip = PERSON) =>
  post(server, '/v1/auth/email/verify', { email, purpose, code }, ip)
/** Makes every code look fresh again, to show what its keys alone decide. */
const refresh = () =>
  s.ctx.db.query('UPDATE email_codes SET expires_at = ?1').run(s.clock.now() + 60_000)

describe('an email code across instances', () => {
  test('asked on one instance, it logs in on another, once', async () => {
    const b = await secondInstance()
    const code = await ask(s)
    const done = await verify(b, code)
    expect(done.status).toBe(200)
    expect(done.body.user).toMatchObject({ email: OWNER })
    expect((await verify(s, code)).status).toBe(400)
  })

  test("another instance knows the asker: a stranger's wrong tries there leave the person's", async () => {
    const b = await secondInstance()
    const code = await ask(s)
    for (let i = 0; i < MAX_OTHER_TRIES; i++) {
      expect((await verify(b, otherCode(code), OWNER, 'login', STRANGER)).status).toBe(400)
    }
    expect((await verify(b, code, OWNER, 'login', STRANGER)).body.error).toContain(
      'tried wrong too many times',
    )
    expect((await verify(b, code)).status).toBe(200)
  })

  test('a sign-up code asked before a restart creates the account after it', async () => {
    const secret = `inv-secret-${newId('inv')}`
    const owner = await s.ctx.store.users.byEmail(OWNER)
    await s.ctx.store.invites.insert({
      id: newId('inv'),
      hash: hashToken(secret),
      created_by: owner?.id as string,
      email: 'ivy@example.com',
      created_at: s.clock.now(),
      expires_at: s.clock.now() + 3600_000,
    })
    const code = await ask(s, 'ivy@example.com', 'signup', { invite: secret, name: 'Ivy' })
    await s.restart()
    const done = await verify(s, code, 'ivy@example.com', 'signup')
    expect(done.status).toBe(200)
    expect(done.body.user).toMatchObject({ email: 'ivy@example.com', name: 'Ivy' })
  })

  test('checked a day later it works; under retired keys (two days) it is refused', async () => {
    const b = await secondInstance()
    const first = await ask(s)
    s.clock.advance(KEY_PERIOD_MS)
    refresh()
    expect((await verify(b, first)).status).toBe(200)

    const second = await ask(s)
    s.clock.advance(2 * KEY_PERIOD_MS)
    refresh()
    const refused = await verify(b, second)
    expect(refused.status).toBe(400)
    expect(refused.body).toEqual({
      error: 'code: was issued under keys this server no longer holds; ask for a new one',
      field: 'code',
    })
    expect((await verify(b, await ask(s))).status).toBe(200)
  })

  test('codes made under keys the database no longer holds (a restored backup) ask for a new one', async () => {
    const code = await ask(s)
    await s.stop()
    // What a restore is, as far as keys go: the backup had none, and the server makes new ones.
    const db = new Database(join(s.dir, 'hark.db'))
    db.run('DELETE FROM server_keys')
    db.close()
    await s.start()
    const refused = await verify(s, code)
    expect(refused.status).toBe(400)
    expect(refused.body.error).toContain('no longer holds')
    expect((await verify(s, await ask(s))).status).toBe(200)
  })
})
