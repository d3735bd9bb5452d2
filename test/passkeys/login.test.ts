import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { type FreshServer, startFreshServer } from './fixture.ts'

let s: FreshServer
beforeEach(async () => {
  s = await startFreshServer()
})
afterEach(() => s.close())

describe('logging in with a passkey', () => {
  test('a discoverable passkey logs in without an email; the cookie works', async () => {
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    expect(options.status).toBe(200)
    expect(options.body.options.userVerification).toBe('required')
    expect(options.body.options.allowCredentials ?? []).toEqual([])

    const response = await owner.authenticator.login(options.body.options)
    const login = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
    expect(login.status).toBe(200)
    expect(login.body.user).toEqual(owner.user)
    expect(login.cookie).toStartWith('__Host-hark_session=')
    expect(login.cookie).not.toBe(owner.cookie) // a login always gets a new session

    const channels = await s.request('GET', '/v1/app/channels', { cookie: login.cookie })
    expect(channels.status).toBe(200)
    expect(channels.body.channels).toEqual([])
    // Without the cookie there is no way in.
    expect((await s.request('GET', '/v1/app/channels')).status).toBe(401)
  })

  test('login/options needs no body', async () => {
    const reply = await s.request('POST', '/v1/auth/passkey/login/options')
    expect(reply.status).toBe(200)
    expect(reply.body.challenge_id).toStartWith('chal_')
  })

  test('the signature counter is stored and updated, and last_used_at is set', async () => {
    const owner = await s.setUpOwner()
    expect((await s.ctx.store.passkeys.byId(owner.authenticator.id))?.last_used_at).toBeNull()
    s.clock.advance(1000)
    expect((await s.logIn(owner.authenticator, { counter: 5 })).status).toBe(200)
    const row = await s.ctx.store.passkeys.byId(owner.authenticator.id)
    expect(row?.counter).toBe(5)
    expect(row?.last_used_at).toBe(s.clock.now())
    expect((await s.logIn(owner.authenticator, { counter: 6 })).status).toBe(200)
    expect((await s.ctx.store.passkeys.byId(owner.authenticator.id))?.counter).toBe(6)
  })

  test('a counter that goes backwards (or stands still) is refused', async () => {
    const owner = await s.setUpOwner()
    expect((await s.logIn(owner.authenticator, { counter: 10 })).status).toBe(200)
    const back = await s.logIn(owner.authenticator, { counter: 9 })
    expect(back.status).toBe(401)
    expect(back.body.error).toContain('counter')
    expect(back.setCookie).toBeNull()
    expect((await s.logIn(owner.authenticator, { counter: 10 })).status).toBe(401)
    expect((await s.logIn(owner.authenticator, { counter: 0 })).status).toBe(401)
    expect((await s.ctx.store.passkeys.byId(owner.authenticator.id))?.counter).toBe(10)
    expect((await s.logIn(owner.authenticator, { counter: 11 })).status).toBe(200)
  })

  test('an authenticator without a counter (always 0) keeps working', async () => {
    const owner = await s.setUpOwner()
    expect((await s.logIn(owner.authenticator, { counter: 0 })).status).toBe(200)
    expect((await s.logIn(owner.authenticator, { counter: 0 })).status).toBe(200)
  })

  test('an unknown passkey is refused (401)', async () => {
    await s.setUpOwner()
    const stranger = s.authenticator()
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    // A credential made for this rpID but never registered here.
    await stranger.register({
      challenge: 'x',
      rp: { id: options.body.options.rpId, name: 'Hark' },
      user: { id: 'dXNlcg', name: 'u', displayName: 'u' },
    })
    const response = await stranger.login(options.body.options)
    const reply = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
    expect(reply.status).toBe(401)
    expect(reply.body.error).toContain('not registered')
  })

  test('a signature by another key is refused', async () => {
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const forger = s.authenticator()
    await forger.register({
      challenge: 'x',
      rp: { id: options.body.options.rpId, name: 'Hark' },
      user: { id: 'dXNlcg', name: 'u', displayName: 'u' },
    })
    const forged = await forger.login(options.body.options)
    const reply = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: {
        challenge_id: options.body.challenge_id,
        response: { ...forged, id: owner.authenticator.id, rawId: owner.authenticator.id },
      },
    })
    expect(reply.status).toBe(401)
    expect(reply.setCookie).toBeNull()
  })
})

describe('what a login response must be', () => {
  test('a replayed login response fails: the challenge is single-use', async () => {
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const json = {
      challenge_id: options.body.challenge_id,
      response: await owner.authenticator.login(options.body.options),
    }
    expect((await s.request('POST', '/v1/auth/passkey/login/verify', { json })).status).toBe(200)
    const replay = await s.request('POST', '/v1/auth/passkey/login/verify', { json })
    expect(replay.status).toBe(400)
    expect(replay.body.field).toBe('challenge_id')
    expect(replay.setCookie).toBeNull()
  })

  test('a failed attempt uses up the challenge too', async () => {
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const bad = await owner.authenticator.login(options.body.options, { uv: false })
    const first = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response: bad },
    })
    expect(first.status).toBe(401)
    const good = await owner.authenticator.login(options.body.options)
    const second = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response: good },
    })
    expect(second.status).toBe(400)
    expect(second.body.field).toBe('challenge_id')
  })

  test('a challenge older than five minutes is refused', async () => {
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const response = await owner.authenticator.login(options.body.options)
    s.clock.advance(5 * 60_000)
    const reply = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
    expect(reply.status).toBe(400)
    expect(reply.body.field).toBe('challenge_id')
  })

  test('a response signed for another challenge is refused', async () => {
    const owner = await s.setUpOwner()
    const one = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const two = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const response = await owner.authenticator.login(one.body.options)
    const reply = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: two.body.challenge_id, response },
    })
    expect(reply.status).toBe(401)
    expect(reply.body.error).toContain('challenge')
  })

  test('a sign-up challenge cannot be used to log in', async () => {
    const owner = await s.setUpOwner()
    await s.ctx.store.settings.set('registration', 'open')
    const signUp = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'new@example.com' },
    })
    const response = await owner.authenticator.login({
      challenge: signUp.body.options.challenge,
      rpId: signUp.body.options.rp.id,
    })
    const reply = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: signUp.body.challenge_id, response },
    })
    expect(reply.status).toBe(400)
    expect(reply.body.field).toBe('challenge_id')
  })

  for (const [what, tamper, words] of [
    ['another origin', { origin: 'https://evil.example' }, 'origin'],
    ['the http origin', { origin: 'http://hark.example.com' }, 'origin'],
    ['another rpID', { rpId: 'evil.example' }, 'RP ID'],
    ['no user verification', { uv: false }, 'verification'],
  ] as const) {
    test(`a login response for ${what} fails`, async () => {
      const owner = await s.setUpOwner()
      const reply = await s.logIn(owner.authenticator, tamper)
      expect(reply.status).toBe(401)
      expect(reply.body.error).toContain(words)
      expect(reply.setCookie).toBeNull()
      expect((await s.ctx.store.passkeys.byId(owner.authenticator.id))?.last_used_at).toBeNull()
    })
  }

  test('a malformed login body is 400 naming the field', async () => {
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const missing = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id },
    })
    expect(missing.status).toBe(400)
    expect(missing.body.field).toBe('response')
    const wrongType = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: {
        challenge_id: options.body.challenge_id,
        response: { id: 'a', rawId: 'a', type: 'password', response: {} },
      },
    })
    expect(wrongType.status).toBe(400)
    expect(wrongType.body.field).toStartWith('response')
    const noChallenge = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { response: {} },
    })
    expect(noChallenge.status).toBe(400)
  })

  test('a foreign Origin on login is refused (login CSRF)', async () => {
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const response = await owner.authenticator.login(options.body.options)
    const reply = await s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response },
      origin: 'https://evil.example',
    })
    expect(reply.status).toBe(403)
    expect(reply.setCookie).toBeNull()
  })
})

describe('what a registration response must be', () => {
  test('a replayed registration response fails', async () => {
    const token = await s.setupToken()
    const options = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: token },
    })
    const json = {
      challenge_id: options.body.challenge_id,
      response: await s.authenticator().register(options.body.options),
    }
    expect((await s.request('POST', '/v1/auth/passkey/register/verify', { json })).status).toBe(200)
    const replay = await s.request('POST', '/v1/auth/passkey/register/verify', { json })
    expect(replay.status).toBe(400)
    expect(replay.body.field).toBe('challenge_id')
    expect(await s.ctx.store.users.all()).toHaveLength(1)
  })

  for (const [what, tamper, words] of [
    ['another origin', { origin: 'https://evil.example' }, 'origin'],
    ['another rpID', { rpId: 'evil.example' }, 'RP ID'],
    ['no user verification', { uv: false }, 'verif'],
  ] as const) {
    test(`a registration response for ${what} fails, and nobody is created`, async () => {
      const reply = await s.signUp(
        s.authenticator(),
        { email: 'o@example.com', setup_token: await s.setupToken() },
        tamper,
      )
      expect(reply.status).toBe(400)
      expect(reply.body.field).toBe('response')
      expect(reply.body.error).toContain(words)
      expect(await s.ctx.store.users.all()).toEqual([])
      expect((await s.request('GET', '/v1/info')).body.needs_setup).toBe(true)
    })
  }
})
