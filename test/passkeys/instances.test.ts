import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { KEY_PERIOD_MS } from '../../src/access/keys/keyring.ts'
import { sleep, startTestServer, type TestServer } from '../harness.ts'
import { type FreshServer, ORIGIN, startFreshServer } from './fixture.ts'

/**
 * Passkey ceremonies whichever instance gets each request (issue 20): options from one server,
 * the response to another on the same data (or to the same one restarted). Their sealed data
 * opens with the keys in the database; before, each process sealed with a key of its own.
 */
let s: FreshServer
let other: TestServer | undefined
beforeEach(async () => {
  s = await startFreshServer()
})
afterEach(async () => {
  await other?.stop()
  other = undefined
  await s.close()
})

/**
 * A second instance on the first one's data and clock, as behind one load balancer. Both run in
 * this one thread: its start-up writes (the push worker's first look at its queue, a turn later)
 * are let finish before the first takes a request, since one instance's open batch would make
 * the other's write wait for a lock only this thread could release. Requests are sequential and
 * each is answered once durable, so none is open after.
 */
async function secondInstance(): Promise<TestServer> {
  other = await startTestServer({ owner: false, baseUrl: ORIGIN, clock: s.clock, dataDir: s.dir })
  await sleep(20)
  return other
}

type Json = Record<string, unknown>
const options = (server: Pick<TestServer, 'request'>, json: Json) =>
  server.request('POST', '/v1/auth/passkey/register/options', { json })
const verify = (server: Pick<TestServer, 'request'>, challenge_id: string, response: unknown) =>
  server.request('POST', '/v1/auth/passkey/register/verify', { json: { challenge_id, response } })
/** Makes a challenge row look fresh again, to show what its key alone decides. */
const refresh = (challengeId: string) =>
  s.ctx.db
    .query('UPDATE challenges SET expires_at = ?1 WHERE id = ?2')
    .run(s.clock.now() + 60_000, challengeId)

describe('a passkey ceremony across instances', () => {
  test('first-run setup: options on one instance, verify on another', async () => {
    const b = await secondInstance()
    const started = await options(s, { email: 'o@example.com', setup_token: await s.setupToken() })
    expect(started.status).toBe(200)
    const authenticator = s.authenticator()
    const response = await authenticator.register(started.body.options)
    const done = await verify(b, started.body.challenge_id, response)
    expect(done.status).toBe(200)
    expect(done.body.user).toMatchObject({ email: 'o@example.com', is_owner: true })
    // And a login begun on the second ends on the first.
    const login = await b.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const assertion = await authenticator.login(login.body.options)
    const loggedIn = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: login.body.challenge_id, response: assertion },
    })
    expect(loggedIn.status).toBe(200)
    expect(loggedIn.body.user.email).toBe('o@example.com')
  })

  test('an invite sign-up begun before a restart finishes after it', async () => {
    const { user } = await s.setUpOwner()
    const invite = await s.invite(user.id, 'ivy@example.com')
    const started = await options(s, { email: 'ivy@example.com', invite })
    expect(started.status).toBe(200)
    await s.restart()
    const response = await s.authenticator().register(started.body.options)
    const done = await verify(s, started.body.challenge_id, response)
    expect(done.status).toBe(200)
    expect(done.body.user.email).toBe('ivy@example.com')
  })

  test('sealed data opens a day later; under a retired key (two days) it is refused', async () => {
    const { user } = await s.setUpOwner()
    const b = await secondInstance()
    const invite = await s.invite(user.id, null, 10 * KEY_PERIOD_MS)
    const first = await options(s, { email: 'day1@example.com', invite })
    const second = await options(s, { email: 'day2@example.com', invite })

    s.clock.advance(KEY_PERIOD_MS)
    refresh(first.body.challenge_id)
    const response = await s.authenticator().register(first.body.options)
    expect((await verify(b, first.body.challenge_id, response)).status).toBe(200)

    s.clock.advance(KEY_PERIOD_MS)
    refresh(second.body.challenge_id)
    const late = await s.authenticator().register(second.body.options)
    const refused = await verify(b, second.body.challenge_id, late)
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ field: 'challenge_id' })
    expect(refused.body.error).toContain('ask for new options')
    expect(await s.ctx.store.users.byEmail('day2@example.com')).toBeUndefined()
  })

  test('tampered or relabelled sealed data is refused', async () => {
    const b = await secondInstance()
    const token = await s.setupToken()
    const seal = (challengeId: string) =>
      (
        s.ctx.db.query('SELECT data FROM challenges WHERE id = ?1').get(challengeId) as {
          data: string
        }
      ).data
    const setData = (challengeId: string, data: string) =>
      s.ctx.db.query('UPDATE challenges SET data = ?1 WHERE id = ?2').run(data, challengeId)
    const a = await options(s, { email: 'o@example.com', setup_token: token })
    const c = await options(s, { email: 'o@example.com', setup_token: token })
    const original = seal(a.body.challenge_id)
    // Another challenge's sealed data, moved: bound to its own challenge id.
    setData(c.body.challenge_id, original)
    const [period, iv, tag, body = ''] = original.split('.')
    const flipped = `${body.startsWith('A') ? 'B' : 'A'}${body.slice(1)}`
    setData(a.body.challenge_id, [period, iv, tag, flipped].join('.'))
    for (const started of [a, c]) {
      const response = await s.authenticator().register(started.body.options)
      const reply = await verify(b, started.body.challenge_id, response)
      expect(reply.status).toBe(400)
      expect(reply.body.field).toBe('challenge_id')
    }
    expect(await s.ctx.store.users.all()).toHaveLength(0)
  })
})
