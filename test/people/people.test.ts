import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { HarkError } from '../../src/core/errors.ts'
import { createAdmittedPerson } from '../../src/people/admission.ts'
import { BASE, failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count, fieldOf, settledWithin } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const DAY = 24 * 3600 * 1000

type Person = TestServer['person']

interface PersonView {
  id: string
  email: string
  name: string | null
  is_owner: boolean
  created_at: number
}
interface InviteView {
  id: string
  email: string | null
  created_at: number
  expires_at: number
  used_at: number | null
  link?: string
  code?: string
}

const userId = (email: string) => s.ctx.store.users.byEmail(email)?.id as string
const people = (person: Person = s.person) =>
  person.call<{ people: PersonView[] }>('GET', '/v1/app/people').then((r) => r.people)
const setRegistration = (registration: unknown, person: Person = s.person) =>
  person.call<{ registration: string }>('PATCH', '/v1/app/settings', { json: { registration } })
const invite = (json?: unknown, person: Person = s.person) =>
  person.call<{ invite: Required<InviteView> }>('POST', '/v1/app/invites', { json })
const invites = (person: Person = s.person) =>
  person.call<{ invites: InviteView[] }>('GET', '/v1/app/invites').then((r) => r.invites)
/** The first step of signing up with a passkey: admission is decided here. */
const signUpOptions = (json: unknown) =>
  s.request('POST', '/v1/auth/passkey/register/options', { json })

describe('GET /v1/app/me', () => {
  test('tells who I am', async () => {
    s = startTestServer()
    const { user } = await s.person.call<{ user: PersonView }>('GET', '/v1/app/me')
    expect(user).toEqual({
      id: userId(s.ownerEmail),
      email: s.ownerEmail,
      name: null,
      is_owner: true,
      created_at: expect.any(Number),
    })
    const bob = s.addPerson('bob@example.com')
    const me = await bob.call<{ user: PersonView }>('GET', '/v1/app/me')
    expect(me.user).toMatchObject({ email: 'bob@example.com', is_owner: false })
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/me'), 401)
    await failsWith(s.agent.call('GET', '/v1/app/me'), 403)
  })
})

describe('GET /v1/app/people', () => {
  test('the owner sees everyone, in order of arrival', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    // Creation times are in ms: a tie would order by id.
    clock.advance(1)
    s.addPerson('bob@example.com')
    clock.advance(1)
    s.addPerson('carol@example.com')
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
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    await failsWith(people(bob), 403)
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/people'), 401)
    await failsWith(s.agent.call('GET', '/v1/app/people'), 403)
  })
})

describe('DELETE /v1/app/people/:id', () => {
  test('removes the person with their channels, messages, tokens, sessions and files', async () => {
    s = startTestServer()
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    const bob = s.addPerson('bob@example.com')
    const bobId = userId('bob@example.com')
    const session = s.session('bob@example.com')
    await bobs.agent.send({ body: { text: 'hi' } })
    const file = await bobs.agent.upload('notes.txt', 'hello', 'text/plain')
    await setRegistration('invite')
    await invite({}, bob)
    const filesDir = join(s.dir, 'files', bobs.channelId)
    expect(existsSync(join(filesDir, file.file_id))).toBe(true)
    // The owner's own things, to see they stay.
    await s.agent.upload('mine.txt', 'mine', 'text/plain')
    const ownerFiles = join(s.dir, 'files', s.channelId)

    expect(await s.person.call('DELETE', `/v1/app/people/${bobId}`)).toEqual({ ok: true })

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
    s = startTestServer()
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    const q = await bobs.agent.send({
      body: { blocks: [{ type: 'confirm', id: 'ok', label: 'Go' }] },
    })
    const held = bobs.agent.raw('GET', `/v1/asks/${q.message.id}`, { query: { wait: 50 } })
    for (let i = 0; i < 200 && s.ctx.waiters.size === 0; i++) await Bun.sleep(5)
    expect(s.ctx.waiters.size).toBe(1)
    await s.person.call('DELETE', `/v1/app/people/${userId('bob@example.com')}`)
    const res = await settledWithin(held, 10_000)
    expect(res).not.toBe('pending')
    expect((res as Response).status).toBe(404)
  })

  test('the email can sign up again afterwards (in open mode)', async () => {
    s = startTestServer()
    s.addPerson('bob@example.com')
    await s.person.call('DELETE', `/v1/app/people/${userId('bob@example.com')}`)
    await setRegistration('open')
    expect((await signUpOptions({ email: 'bob@example.com' })).status).toBe(200)
  })

  test('the owner cannot be removed (403), not even by themselves', async () => {
    s = startTestServer()
    const err = await failsWith(
      s.person.call('DELETE', `/v1/app/people/${userId(s.ownerEmail)}`),
      403,
    )
    expect(err.error).toContain('owner')
    expect((await s.agent.channel()).channel.id).toBe(s.channelId)
  })

  test('an unknown id, or one already removed, is 404', async () => {
    s = startTestServer()
    s.addPerson('bob@example.com')
    const bobId = userId('bob@example.com')
    await s.person.call('DELETE', `/v1/app/people/${bobId}`)
    await failsWith(s.person.call('DELETE', `/v1/app/people/${bobId}`), 404)
    await failsWith(s.person.call('DELETE', '/v1/app/people/usr_nope'), 404)
  })

  test('anyone but the owner is 403, and nobody is removed', async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    s.addPerson('carol@example.com')
    await failsWith(bob.call('DELETE', `/v1/app/people/${userId('carol@example.com')}`), 403)
    await failsWith(bob.call('DELETE', `/v1/app/people/${userId('bob@example.com')}`), 403)
    await failsWith(bob.call('DELETE', `/v1/app/people/${userId(s.ownerEmail)}`), 403)
    expect(await people()).toHaveLength(3)
  })

  test('from the web app it needs the app origin', async () => {
    s = startTestServer()
    s.addPerson('bob@example.com')
    const bobId = userId('bob@example.com')
    const { cookie } = s.session()
    for (const origin of [null, 'null', 'https://evil.example']) {
      const res = await s.request('DELETE', `/v1/app/people/${bobId}`, { cookie, origin })
      expect(res.status).toBe(403)
    }
    expect(await people()).toHaveLength(2)
    expect((await s.request('DELETE', `/v1/app/people/${bobId}`, { cookie })).status).toBe(200)
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = startTestServer()
    s.addPerson('bob@example.com')
    const bobId = userId('bob@example.com')
    await failsWith(s.raw().call('DELETE', `/v1/app/people/${bobId}`), 401)
    await failsWith(s.agent.call('DELETE', `/v1/app/people/${bobId}`), 403)
    expect(await people()).toHaveLength(2)
  })
})

describe('settings: the registration mode', () => {
  test("is 'closed' at first; everyone logged in can read it; /v1/info shows it", async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    expect(await s.person.call('GET', '/v1/app/settings')).toEqual({ registration: 'closed' })
    expect(await bob.call('GET', '/v1/app/settings')).toEqual({ registration: 'closed' })
    expect((await s.raw().info()).registration).toBe('closed')
  })

  test('the owner changes it to each mode; /v1/info follows', async () => {
    s = startTestServer()
    for (const mode of ['invite', 'open', 'closed'] as const) {
      expect(await setRegistration(mode)).toEqual({ registration: mode })
      expect(await s.person.call('GET', '/v1/app/settings')).toEqual({ registration: mode })
      expect((await s.raw().info()).registration).toBe(mode)
    }
  })

  test('an invalid mode is 400 naming registration, and nothing changes', async () => {
    s = startTestServer()
    await setRegistration('invite')
    for (const registration of ['bogus', '', 'OPEN', ' open', 1, null, true, ['open']]) {
      const res = await s.person.raw('PATCH', '/v1/app/settings', { json: { registration } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('registration')
    }
    const missing = await s.person.raw('PATCH', '/v1/app/settings', { json: {} })
    expect(missing.status).toBe(400)
    expect(await fieldOf(missing)).toBe('registration')
    expect((await s.raw().info()).registration).toBe('invite')
  })

  test('anyone but the owner is 403 and nothing changes', async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    await failsWith(setRegistration('open', bob), 403)
    expect((await s.raw().info()).registration).toBe('closed')
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = startTestServer()
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
    const { cookie } = s.session()
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
    s = startTestServer()
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(403)
    await setRegistration('invite')
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(403)
    await setRegistration('open')
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(200)
    // An existing account is 409 in any mode: log in instead.
    expect((await signUpOptions({ email: s.ownerEmail })).status).toBe(409)
  })
})

describe('POST /v1/app/invites', () => {
  test('the owner can always invite, even when registration is closed', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    const { invite: inv } = await invite({ email: 'new@example.com' })
    expect(inv.id).toStartWith('inv_')
    expect(inv.email).toBe('new@example.com')
    expect(inv.created_at).toBe(clock.ms)
    expect(inv.expires_at).toBe(clock.ms + 7 * DAY)
    expect(inv.used_at).toBeNull()
    expect(inv.code).toMatch(/^[0-9A-Za-z]{32}$/)
    expect(inv.link).toBe(`${BASE}/invite#${inv.code}`)
    expect(JSON.stringify(s.ctx.db.query('SELECT * FROM invites').all())).not.toContain(inv.code)
  })

  test('an invite without an email is for anyone; expires_in sets its life', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    const { invite: inv } = await invite({ expires_in: 3600 })
    expect(inv.email).toBeNull()
    expect(inv.expires_at).toBe(clock.ms + 3600_000)
    const longest = await invite({ expires_in: 30 * 24 * 3600 })
    expect(longest.invite.expires_at).toBe(clock.ms + 30 * DAY)
  })

  test('a non-owner may invite only in invite mode', async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    await failsWith(invite({}, bob), 403)
    await setRegistration('open')
    await failsWith(invite({}, bob), 403)
    await setRegistration('invite')
    const { invite: inv } = await invite({ email: 'friend@example.com' }, bob)
    expect(inv.email).toBe('friend@example.com')
    expect(count(s.ctx, 'invites')).toBe(1)
  })

  test('an invalid email is 400 naming email; an invalid expires_in 400 naming expires_in', async () => {
    s = startTestServer()
    for (const email of ['', 'nope', 'a@b', 5, null]) {
      const res = await s.person.raw('POST', '/v1/app/invites', { json: { email } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('email')
    }
    for (const expires_in of [0, -1, 30 * 24 * 3600 + 1, '60', null]) {
      const res = await s.person.raw('POST', '/v1/app/invites', { json: { expires_in } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('expires_in')
    }
    expect(count(s.ctx, 'invites')).toBe(0)
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = startTestServer()
    await failsWith(s.raw().call('POST', '/v1/app/invites'), 401)
    await failsWith(s.agent.call('POST', '/v1/app/invites'), 403)
    const { cookie } = s.session()
    const res = await s.request('POST', '/v1/app/invites', { cookie, origin: null, json: {} })
    expect(res.status).toBe(403)
    expect(count(s.ctx, 'invites')).toBe(0)
    const ok = await s.request('POST', '/v1/app/invites', { cookie, json: {} })
    expect(ok.status).toBe(200)
  })
})

describe('an invite lets one person sign up', () => {
  test('in closed mode, the invite starts a sign-up that would otherwise be refused', async () => {
    s = startTestServer()
    const { invite: inv } = await invite({ email: 'new@example.com' })
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(403)
    const ok = await signUpOptions({ email: 'new@example.com', invite: inv.code })
    expect(ok.status).toBe(200)
    expect(ok.body.challenge_id).toBeString()
  })

  test('an invite for one email does not admit another (any case of the same one is fine)', async () => {
    s = startTestServer()
    const { invite: inv } = await invite({ email: 'new@example.com' })
    expect((await signUpOptions({ email: 'other@example.com', invite: inv.code })).status).toBe(403)
    expect((await signUpOptions({ email: 'NEW@example.com', invite: inv.code })).status).toBe(200)
  })

  test('is used once: the person is made, the invite leaves the list, a second use is 403', async () => {
    s = startTestServer()
    const { invite: inv } = await invite()
    const { user } = createAdmittedPerson(
      s.ctx,
      { invite: inv.code },
      { email: 'new@example.com', name: ' New ' },
      (u) => u,
    )
    expect(user).toMatchObject({ email: 'new@example.com', name: 'New', is_owner: 0 })
    expect(await invites()).toEqual([])
    const row = s.ctx.store.invites.byId(inv.id)
    expect(row?.used_by).toBe(user.id)
    let status = 0
    try {
      createAdmittedPerson(s.ctx, { invite: inv.code }, { email: 'again@example.com' }, () => 0)
    } catch (error) {
      status = (error as HarkError).status
    }
    expect(status).toBe(403)
    expect((await signUpOptions({ email: 'x@example.com', invite: inv.code })).status).toBe(403)
    expect(await people()).toHaveLength(2)
  })

  test('an unknown, expired or revoked invite is 403', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    expect((await signUpOptions({ email: 'a@example.com', invite: 'nope' })).status).toBe(403)
    const short = await invite({ expires_in: 60 })
    const revoked = await invite()
    await s.person.call('DELETE', `/v1/app/invites/${revoked.invite.id}`)
    expect(
      (await signUpOptions({ email: 'a@example.com', invite: revoked.invite.code })).status,
    ).toBe(403)
    clock.advance(60_000 - 1)
    expect(
      (await signUpOptions({ email: 'a@example.com', invite: short.invite.code })).status,
    ).toBe(200)
    clock.advance(1)
    expect(
      (await signUpOptions({ email: 'a@example.com', invite: short.invite.code })).status,
    ).toBe(403)
  })

  test('a setup token once the owner exists is 409', async () => {
    s = startTestServer()
    const res = await signUpOptions({ email: 'a@example.com', setup_token: 'x' })
    expect(res.status).toBe(409)
  })

  test('an invite made by a person who is removed goes with them', async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    await setRegistration('invite')
    const { invite: inv } = await invite({}, bob)
    await s.person.call('DELETE', `/v1/app/people/${userId('bob@example.com')}`)
    expect((await signUpOptions({ email: 'a@example.com', invite: inv.code })).status).toBe(403)
  })
})

describe('GET /v1/app/invites', () => {
  test('lists open invites, newest first, without their codes; used and expired ones drop out', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    const short = await invite({ expires_in: 60 })
    clock.advance(1)
    const used = await invite()
    clock.advance(1)
    const open = await invite({ email: 'x@example.com' })
    createAdmittedPerson(s.ctx, { invite: used.invite.code }, { email: 'u@example.com' }, () => 0)
    const list = await invites()
    expect(list.map((i) => i.id)).toEqual([open.invite.id, short.invite.id])
    expect(list[0]).toEqual({
      id: open.invite.id,
      email: 'x@example.com',
      created_at: open.invite.created_at,
      expires_at: open.invite.expires_at,
      used_at: null,
    })
    expect(JSON.stringify(list)).not.toContain(open.invite.code)
    clock.advance(60_000)
    expect((await invites()).map((i) => i.id)).toEqual([open.invite.id])
  })

  test("the owner sees everyone's invites; a non-owner only their own", async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    const carol = s.addPerson('carol@example.com')
    await setRegistration('invite')
    const byOwner = await invite()
    const byBob = await invite({}, bob)
    const byCarol = await invite({}, carol)
    expect((await invites()).map((i) => i.id).sort()).toEqual(
      [byOwner.invite.id, byBob.invite.id, byCarol.invite.id].sort(),
    )
    expect((await invites(bob)).map((i) => i.id)).toEqual([byBob.invite.id])
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/invites'), 401)
    await failsWith(s.agent.call('GET', '/v1/app/invites'), 403)
  })
})

describe('DELETE /v1/app/invites/:id', () => {
  test('revokes an invite: it leaves the list and admits nobody', async () => {
    s = startTestServer()
    const { invite: inv } = await invite()
    expect(await s.person.call('DELETE', `/v1/app/invites/${inv.id}`)).toEqual({ ok: true })
    expect(await invites()).toEqual([])
    expect((await signUpOptions({ email: 'a@example.com', invite: inv.code })).status).toBe(403)
  })

  test('an unknown or already revoked invite is 404', async () => {
    s = startTestServer()
    const { invite: inv } = await invite()
    await s.person.call('DELETE', `/v1/app/invites/${inv.id}`)
    await failsWith(s.person.call('DELETE', `/v1/app/invites/${inv.id}`), 404)
    await failsWith(s.person.call('DELETE', '/v1/app/invites/inv_nope'), 404)
  })

  test("a non-owner revokes their own; another's is 404; the owner may revoke any", async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    const carol = s.addPerson('carol@example.com')
    await setRegistration('invite')
    const byOwner = await invite()
    const byBob = await invite({}, bob)
    const byCarol = await invite({}, carol)
    await failsWith(bob.call('DELETE', `/v1/app/invites/${byOwner.invite.id}`), 404)
    await failsWith(bob.call('DELETE', `/v1/app/invites/${byCarol.invite.id}`), 404)
    expect(await bob.call('DELETE', `/v1/app/invites/${byBob.invite.id}`)).toEqual({ ok: true })
    expect(await s.person.call('DELETE', `/v1/app/invites/${byCarol.invite.id}`)).toEqual({
      ok: true,
    })
    expect((await invites()).map((i) => i.id)).toEqual([byOwner.invite.id])
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = startTestServer()
    const { invite: inv } = await invite()
    await failsWith(s.raw().call('DELETE', `/v1/app/invites/${inv.id}`), 401)
    await failsWith(s.agent.call('DELETE', `/v1/app/invites/${inv.id}`), 403)
    const { cookie } = s.session()
    const res = await s.request('DELETE', `/v1/app/invites/${inv.id}`, {
      cookie,
      origin: 'null',
    })
    expect(res.status).toBe(403)
    expect(await invites()).toHaveLength(1)
  })
})
