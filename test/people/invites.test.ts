import { afterEach, describe, expect, test } from 'bun:test'
import type { HarkError } from '../../src/core/errors.ts'
import { createAdmittedPerson } from '../../src/people/enrol/admission.ts'
import { BASE, failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { peopleCalls } from './calls.ts'
import { count, DAY, fieldOf } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const { userId, people, setRegistration, invite, invites, signUpOptions, app } = peopleCalls(
  () => s,
)

describe('POST /v1/app/invites', () => {
  test('the owner can always invite, even when registration is closed', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
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
    s = await startTestServer({ clock })
    const { invite: inv } = await invite({ expires_in: 3600 })
    expect(inv.email).toBeNull()
    expect(inv.expires_at).toBe(clock.ms + 3600_000)
    const longest = await invite({ expires_in: 30 * 24 * 3600 })
    expect(longest.invite.expires_at).toBe(clock.ms + 30 * DAY)
  })

  test('a non-owner may invite only in invite mode', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const bob = await app('bob@example.com')
    await failsWith(invite({}, bob), 403)
    await setRegistration('open')
    await failsWith(invite({}, bob), 403)
    await setRegistration('invite')
    const { invite: inv } = await invite({ email: 'friend@example.com' }, bob)
    expect(inv.email).toBe('friend@example.com')
    expect(count(s.ctx, 'invites')).toBe(1)
  })

  test('an invalid email is 400 naming email; an invalid expires_in 400 naming expires_in', async () => {
    s = await startTestServer()
    for (const email of ['', 'nope', 'a@b', 5, null]) {
      const res = await (await app()).raw('POST', '/v1/app/invites', { json: { email } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('email')
    }
    for (const expires_in of [0, -1, 30 * 24 * 3600 + 1, '60', null]) {
      const res = await (await app()).raw('POST', '/v1/app/invites', { json: { expires_in } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('expires_in')
    }
    expect(count(s.ctx, 'invites')).toBe(0)
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('POST', '/v1/app/invites'), 401)
    await failsWith(s.agent.call('POST', '/v1/app/invites'), 403)
    const { cookie } = await s.session()
    const res = await s.request('POST', '/v1/app/invites', { cookie, origin: null, json: {} })
    expect(res.status).toBe(403)
    expect(count(s.ctx, 'invites')).toBe(0)
    const ok = await s.request('POST', '/v1/app/invites', { cookie, json: {} })
    expect(ok.status).toBe(200)
  })
})

describe('an invite lets one person sign up', () => {
  test('in closed mode, the invite starts a sign-up that would otherwise be refused', async () => {
    s = await startTestServer()
    const { invite: inv } = await invite({ email: 'new@example.com' })
    expect((await signUpOptions({ email: 'new@example.com' })).status).toBe(403)
    const ok = await signUpOptions({ email: 'new@example.com', invite: inv.code })
    expect(ok.status).toBe(200)
    expect(ok.body.challenge_id).toBeString()
  })

  test('an invite for one email does not admit another (any case of the same one is fine)', async () => {
    s = await startTestServer()
    const { invite: inv } = await invite({ email: 'new@example.com' })
    expect((await signUpOptions({ email: 'other@example.com', invite: inv.code })).status).toBe(403)
    expect((await signUpOptions({ email: 'NEW@example.com', invite: inv.code })).status).toBe(200)
  })

  test('is used once: the person is made, the invite leaves the list, a second use is 403', async () => {
    s = await startTestServer()
    const { invite: inv } = await invite()
    const { user } = await createAdmittedPerson(
      s.ctx,
      { invite: inv.code },
      { email: 'new@example.com', name: ' New ' },
      async (u) => u,
    )
    expect(user).toMatchObject({ email: 'new@example.com', name: 'New', is_owner: 0 })
    expect(await invites()).toEqual([])
    const row = await s.ctx.store.invites.byId(inv.id)
    expect(row?.used_by).toBe(user.id)
    let status = 0
    try {
      await createAdmittedPerson(
        s.ctx,
        { invite: inv.code },
        { email: 'again@example.com' },
        async () => 0,
      )
    } catch (error) {
      status = (error as HarkError).status
    }
    expect(status).toBe(403)
    expect((await signUpOptions({ email: 'x@example.com', invite: inv.code })).status).toBe(403)
    expect(await people()).toHaveLength(2)
  })

  test('an unknown, expired or revoked invite is 403', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
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
    s = await startTestServer()
    const res = await signUpOptions({ email: 'a@example.com', setup_token: 'x' })
    expect(res.status).toBe(409)
  })

  test('an invite made by a person who is removed goes with them', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    await setRegistration('invite')
    const { invite: inv } = await invite({}, await app('bob@example.com'))
    await (await app()).call('DELETE', `/v1/app/people/${await userId('bob@example.com')}`)
    expect((await signUpOptions({ email: 'a@example.com', invite: inv.code })).status).toBe(403)
  })
})

describe('GET /v1/app/invites', () => {
  test('lists open invites, newest first, without their codes; used and expired ones drop out', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const short = await invite({ expires_in: 60 })
    clock.advance(1)
    const used = await invite()
    clock.advance(1)
    const open = await invite({ email: 'x@example.com' })
    await createAdmittedPerson(
      s.ctx,
      { invite: used.invite.code },
      { email: 'u@example.com' },
      async () => 0,
    )
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
    const { bob, byOwner, byBob, byCarol } = await invitesOfThree()
    expect((await invites()).map((i) => i.id).sort()).toEqual(
      [byOwner.invite.id, byBob.invite.id, byCarol.invite.id].sort(),
    )
    expect((await invites(bob)).map((i) => i.id)).toEqual([byBob.invite.id])
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/invites'), 401)
    await failsWith(s.agent.call('GET', '/v1/app/invites'), 403)
  })
})

/** Invite mode, and one invite each by the owner, Bob and Carol (Bob and Carol are not owners). */
async function invitesOfThree() {
  s = await startTestServer()
  const bob = await s.addPerson('bob@example.com')
  await s.addPerson('carol@example.com')
  await setRegistration('invite')
  const byOwner = await invite()
  const byBob = await invite({}, await app('bob@example.com'))
  const byCarol = await invite({}, await app('carol@example.com'))
  return { bob, byOwner, byBob, byCarol }
}

describe('DELETE /v1/app/invites/:id', () => {
  test('revokes an invite: it leaves the list and admits nobody', async () => {
    s = await startTestServer()
    const { invite: inv } = await invite()
    expect(await s.person.call('DELETE', `/v1/app/invites/${inv.id}`)).toEqual({ ok: true })
    expect(await invites()).toEqual([])
    expect((await signUpOptions({ email: 'a@example.com', invite: inv.code })).status).toBe(403)
  })

  test('an unknown or already revoked invite is 404', async () => {
    s = await startTestServer()
    const { invite: inv } = await invite()
    await s.person.call('DELETE', `/v1/app/invites/${inv.id}`)
    await failsWith(s.person.call('DELETE', `/v1/app/invites/${inv.id}`), 404)
    await failsWith(s.person.call('DELETE', '/v1/app/invites/inv_nope'), 404)
  })

  test("a non-owner revokes their own; another's is 404; the owner may revoke any", async () => {
    const { bob, byOwner, byBob, byCarol } = await invitesOfThree()
    await failsWith(bob.call('DELETE', `/v1/app/invites/${byOwner.invite.id}`), 404)
    await failsWith(bob.call('DELETE', `/v1/app/invites/${byCarol.invite.id}`), 404)
    expect(await bob.call('DELETE', `/v1/app/invites/${byBob.invite.id}`)).toEqual({ ok: true })
    expect(await s.person.call('DELETE', `/v1/app/invites/${byCarol.invite.id}`)).toEqual({
      ok: true,
    })
    expect((await invites()).map((i) => i.id)).toEqual([byOwner.invite.id])
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = await startTestServer()
    const { invite: inv } = await invite()
    await failsWith(s.raw().call('DELETE', `/v1/app/invites/${inv.id}`), 401)
    await failsWith(s.agent.call('DELETE', `/v1/app/invites/${inv.id}`), 403)
    const { cookie } = await s.session()
    const res = await s.request('DELETE', `/v1/app/invites/${inv.id}`, {
      cookie,
      origin: 'null',
    })
    expect(res.status).toBe(403)
    expect(await invites()).toHaveLength(1)
  })
})
