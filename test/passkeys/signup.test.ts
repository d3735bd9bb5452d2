import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { type FreshServer, startFreshServer } from './fixture.ts'

let s: FreshServer
let ownerId: string
beforeEach(async () => {
  s = await startFreshServer()
  ownerId = (await s.setUpOwner()).user.id
})
afterEach(() => s.close())

const people = async () => (await s.ctx.store.users.all()).map((u) => u.email).sort()

describe('signing up with a passkey after setup', () => {
  test('closed mode (the default) refuses sign-up with 403, before any ceremony', async () => {
    const reply = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'new@example.com' },
    })
    expect(reply.status).toBe(403)
    expect(reply.body.error).toContain('registration is closed')
    expect(await people()).toEqual(['owner@example.com'])
  })

  test('a mode closed between options and verify refuses the verification', async () => {
    await s.ctx.store.settings.set('registration', 'open')
    const options = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'new@example.com' },
    })
    expect(options.status).toBe(200)
    await s.ctx.store.settings.set('registration', 'closed')
    const response = await s.authenticator().register(options.body.options)
    const reply = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
    expect(reply.status).toBe(403)
    expect(await people()).toEqual(['owner@example.com'])
  })

  test('open mode: anyone signs up, as a person who is not the owner', async () => {
    await s.ctx.store.settings.set('registration', 'open')
    const authenticator = s.authenticator()
    const reply = await s.signUp(authenticator, { email: 'new@example.com', name: 'Nia' })
    expect(reply.status).toBe(200)
    expect(reply.body.user).toMatchObject({
      email: 'new@example.com',
      name: 'Nia',
      is_owner: false,
    })
    expect((await s.request('GET', '/v1/app/channels', { cookie: reply.cookie })).status).toBe(200)
    expect((await s.logIn(authenticator)).body.user.email).toBe('new@example.com')
  })

  test('an email that already has an account is 409', async () => {
    await s.ctx.store.settings.set('registration', 'open')
    const reply = await s.signUp(s.authenticator(), { email: 'owner@example.com' })
    expect(reply.status).toBe(409)
  })

  test('invite mode: a live invite signs up once; then it is used', async () => {
    await s.ctx.store.settings.set('registration', 'invite')
    const secret = await s.invite(ownerId)
    const closed = await s.signUp(s.authenticator(), { email: 'new@example.com' })
    expect(closed.status).toBe(403)

    const reply = await s.signUp(s.authenticator(), { email: 'new@example.com', invite: secret })
    expect(reply.status).toBe(200)
    expect(reply.body.user).toMatchObject({ email: 'new@example.com', is_owner: false })
    const used = await s.ctx.store.invites.open(s.clock.now())
    expect(used).toEqual([])

    const again = await s.signUp(s.authenticator(), { email: 'other@example.com', invite: secret })
    expect(again.status).toBe(403)
    expect(again.body.error).toContain('invite')
    expect(await people()).toEqual(['new@example.com', 'owner@example.com'])
  })

  test('an invite used by someone else between options and verify refuses the second', async () => {
    await s.ctx.store.settings.set('registration', 'invite')
    const secret = await s.invite(ownerId)
    const start = (email: string) =>
      s.request('POST', '/v1/auth/passkey/register/options', { json: { email, invite: secret } })
    const a = await start('a@example.com')
    const b = await start('b@example.com')
    expect([a.status, b.status]).toEqual([200, 200])
    const finish = async (options: typeof a) =>
      s.request('POST', '/v1/auth/passkey/register/verify', {
        json: {
          challenge_id: options.body.challenge_id,
          response: await s.authenticator().register(options.body.options),
        },
      })
    const replies = await Promise.all([finish(a), finish(b)])
    expect(replies.map((r) => r.status).sort()).toEqual([200, 403])
    expect(await people()).toHaveLength(2)
  })

  test('an invite for another email, an expired one or a made-up one is 403', async () => {
    await s.ctx.store.settings.set('registration', 'invite')
    const forBea = await s.invite(ownerId, 'bea@example.com')
    const wrong = await s.signUp(s.authenticator(), { email: 'eve@example.com', invite: forBea })
    expect(wrong.status).toBe(403)
    const short = await s.invite(ownerId, null, 1000)
    s.clock.advance(1000)
    const expired = await s.signUp(s.authenticator(), { email: 'eve@example.com', invite: short })
    expect(expired.status).toBe(403)
    const madeUp = await s.signUp(s.authenticator(), { email: 'eve@example.com', invite: 'x' })
    expect(madeUp.status).toBe(403)
    const right = await s.signUp(s.authenticator(), { email: 'Bea@example.com', invite: forBea })
    expect(right.status).toBe(200)
  })
})
