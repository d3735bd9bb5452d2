import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { type PersonView, peopleCalls } from './calls.ts'
import { count, fieldOf, settledWithin } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const { userId, people, setRegistration, invite, signUpOptions, app } = peopleCalls(() => s)

describe('GET /v1/app/me', () => {
  test('tells who I am', async () => {
    s = await startTestServer()
    const { user } = await s.person.call<{ user: PersonView }>('GET', '/v1/app/me')
    expect(user).toEqual({
      id: await userId(s.ownerEmail),
      email: s.ownerEmail,
      name: null,
      is_owner: true,
      created_at: expect.any(Number),
    })
    const bob = await s.addPerson('bob@example.com')
    const me = await bob.call<{ user: PersonView }>('GET', '/v1/app/me')
    expect(me.user).toMatchObject({ email: 'bob@example.com', is_owner: false })
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/me'), 401)
    await failsWith(s.agent.call('GET', '/v1/app/me'), 403)
  })
})

describe('GET /v1/app/people', () => {
  test('the owner sees everyone, in order of arrival', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    // Creation times are in ms: a tie would order by id.
    clock.advance(1)
    await s.addPerson('bob@example.com')
    clock.advance(1)
    await s.addPerson('carol@example.com')
    const list = await people()
    expect(list.map((p) => [p.email, p.is_owner])).toEqual([
      [s.ownerEmail, true],
      ['bob@example.com', false],
      ['carol@example.com', false],
    ])
    expect(Object.keys(list[0] as PersonView).sort()).toEqual(
      ['created_at', 'email', 'id', 'is_owner', 'name'].sort(),
    )
  })

  test('anyone else is 403', async () => {
    s = await startTestServer()
    const bob = await s.addPerson('bob@example.com')
    await failsWith(people(bob), 403)
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/people'), 401)
    await failsWith(s.agent.call('GET', '/v1/app/people'), 403)
  })
})

describe('DELETE /v1/app/people/:id', () => {
  test('removes the person with their channels, messages, tokens, sessions and files', async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const bob = await s.addPerson('bob@example.com')
    const bobId = await userId('bob@example.com')
    const session = await s.session('bob@example.com')
    await bobs.agent.send({ body: { text: 'hi' } })
    const file = await bobs.agent.upload('notes.txt', 'hello', 'text/plain')
    await setRegistration('invite')
    await invite({}, await app('bob@example.com'))
    const filesDir = join(s.dir, 'files', bobs.channelId)
    expect(existsSync(join(filesDir, file.file_id))).toBe(true)
    // The owner's own things, to see they stay.
    await s.agent.upload('mine.txt', 'mine', 'text/plain')
    const ownerFiles = join(s.dir, 'files', s.channelId)

    expect(await (await app()).call('DELETE', `/v1/app/people/${bobId}`)).toEqual({ ok: true })

    await failsWith(bobs.agent.channel(), 401)
    await failsWith(bob.channels(), 401)
    expect((await s.request('GET', '/v1/app/me', { cookie: session.cookie })).status).toBe(401)
    expect(existsSync(filesDir)).toBe(false)
    expect(count(s.ctx, 'channels', 'user_id = ?1', bobId)).toBe(0)
    expect(count(s.ctx, 'tokens', 'user_id = ?1', bobId)).toBe(0)
    expect(count(s.ctx, 'sessions', 'user_id = ?1', bobId)).toBe(0)
    expect(count(s.ctx, 'messages', 'channel_id = ?1', bobs.channelId)).toBe(0)
    expect(count(s.ctx, 'files', 'channel_id = ?1', bobs.channelId)).toBe(0)
    expect(count(s.ctx, 'invites', 'created_by = ?1', bobId)).toBe(0)
    expect((await people()).map((p) => p.email)).toEqual([s.ownerEmail])
    // The owner's channel, token and files are untouched.
    expect((await s.agent.channel()).channel.id).toBe(s.channelId)
    expect(existsSync(ownerFiles)).toBe(true)
  })

  test("answers the removed person's agents' held waits for answers", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const q = await bobs.agent.send({
      body: { blocks: [{ type: 'confirm', id: 'ok', label: 'Go' }] },
    })
    const held = bobs.agent.raw('GET', `/v1/asks/${q.message.id}`, { query: { wait: 50 } })
    for (let i = 0; i < 200 && s.ctx.waiters.size === 0; i++) await Bun.sleep(5)
    expect(s.ctx.waiters.size).toBe(1)
    await (await app()).call('DELETE', `/v1/app/people/${await userId('bob@example.com')}`)
    const res = await settledWithin(held, 10_000)
    expect(res).not.toBe('pending')
    expect((res as Response).status).toBe(404)
  })

  test('the email can sign up again afterwards (in open mode)', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    await (await app()).call('DELETE', `/v1/app/people/${await userId('bob@example.com')}`)
    await setRegistration('open')
    expect((await signUpOptions({ email: 'bob@example.com' })).status).toBe(200)
  })

  test('the owner cannot be removed (403), not even by themselves', async () => {
    s = await startTestServer()
    const err = await failsWith(
      (await app()).call('DELETE', `/v1/app/people/${await userId(s.ownerEmail)}`),
      403,
    )
    expect(err.error).toContain('owner')
    expect((await s.agent.channel()).channel.id).toBe(s.channelId)
  })

  test('an unknown id, or one already removed, is 404', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const bobId = await userId('bob@example.com')
    await (await app()).call('DELETE', `/v1/app/people/${bobId}`)
    await failsWith((await app()).call('DELETE', `/v1/app/people/${bobId}`), 404)
    await failsWith((await app()).call('DELETE', '/v1/app/people/usr_nope'), 404)
  })

  test('anyone but the owner is 403, and nobody is removed', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const bob = await app('bob@example.com')
    await s.addPerson('carol@example.com')
    await failsWith(bob.call('DELETE', `/v1/app/people/${await userId('carol@example.com')}`), 403)
    await failsWith(bob.call('DELETE', `/v1/app/people/${await userId('bob@example.com')}`), 403)
    await failsWith(bob.call('DELETE', `/v1/app/people/${await userId(s.ownerEmail)}`), 403)
    expect(await people()).toHaveLength(3)
  })

  test('from the web app it needs the app origin', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const bobId = await userId('bob@example.com')
    const { cookie } = await s.session()
    for (const origin of [null, 'null', 'https://evil.example']) {
      const res = await s.request('DELETE', `/v1/app/people/${bobId}`, { cookie, origin })
      expect(res.status).toBe(403)
    }
    expect(await people()).toHaveLength(2)
    expect((await s.request('DELETE', `/v1/app/people/${bobId}`, { cookie })).status).toBe(200)
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const bobId = await userId('bob@example.com')
    await failsWith(s.raw().call('DELETE', `/v1/app/people/${bobId}`), 401)
    await failsWith(s.agent.call('DELETE', `/v1/app/people/${bobId}`), 403)
    expect(await people()).toHaveLength(2)
  })
})

describe('settings: the registration mode', () => {
  test("is 'closed' at first; everyone logged in can read it; /v1/info shows it", async () => {
    s = await startTestServer()
    const bob = await s.addPerson('bob@example.com')
    expect(await s.person.call('GET', '/v1/app/settings')).toEqual({ registration: 'closed' })
    expect(await bob.call('GET', '/v1/app/settings')).toEqual({ registration: 'closed' })
    expect((await s.raw().info()).registration).toBe('closed')
  })

  test('the owner changes it to each mode; /v1/info follows', async () => {
    s = await startTestServer()
    for (const mode of ['invite', 'open', 'closed'] as const) {
      expect(await setRegistration(mode)).toEqual({ registration: mode })
      expect(await s.person.call('GET', '/v1/app/settings')).toEqual({ registration: mode })
      expect((await s.raw().info()).registration).toBe(mode)
    }
  })

  test('an invalid mode is 400 naming registration, and nothing changes', async () => {
    s = await startTestServer()
    await setRegistration('invite')
    for (const registration of ['bogus', '', 'OPEN', ' open', 1, null, true, ['open']]) {
      const res = await (await app()).raw('PATCH', '/v1/app/settings', { json: { registration } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('registration')
    }
    const missing = await (await app()).raw('PATCH', '/v1/app/settings', { json: {} })
    expect(missing.status).toBe(400)
    expect(await fieldOf(missing)).toBe('registration')
    expect((await s.raw().info()).registration).toBe('invite')
  })

  test('anyone but the owner is 403 and nothing changes', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const err = await failsWith(setRegistration('open', await app('bob@example.com')), 403)
    expect(err.error).toContain('owner')
    expect((await s.raw().info()).registration).toBe('closed')
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/settings'), 401)
    await failsWith(
      s.raw().call('PATCH', '/v1/app/settings', { json: { registration: 'open' } }),
      401,
    )
    await failsWith(s.agent.call('GET', '/v1/app/settings'), 403)
    await failsWith(
      s.agent.call('PATCH', '/v1/app/settings', { json: { registration: 'open' } }),
      403,
    )
    const { cookie } = await s.session()
    const foreign = await s.request('PATCH', '/v1/app/settings', {
      cookie,
      origin: 'https://evil.example',
      json: { registration: 'open' },
    })
    expect(foreign.status).toBe(403)
    expect((await s.raw().info()).registration).toBe('closed')
    const ok = await s.request('PATCH', '/v1/app/settings', {
      cookie,
      json: { registration: 'open' },
    })
    expect(ok.body).toEqual({ registration: 'open' })
  })

  test('decides who may sign up: closed refuses strangers, open lets them in', async () => {
    s = await startTestServer()
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(403)
    await setRegistration('invite')
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(403)
    await setRegistration('open')
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(200)
    // An existing account is 409 in any mode: log in instead.
    expect((await signUpOptions({ email: s.ownerEmail })).status).toBe(409)
  })
})
