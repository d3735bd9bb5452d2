import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { setupTokenFile } from '../../src/people/setup.ts'
import { type FreshServer, ORIGIN, RP_ID, startFreshServer } from './fixture.ts'

let s: FreshServer
beforeEach(async () => {
  s = await startFreshServer()
})
afterEach(() => s.close())

const owners = async () => (await s.ctx.store.users.all()).filter((u) => u.is_owner === 1)

describe('first-run setup with a passkey', () => {
  test('the setup token creates the owner, their passkey and a session', async () => {
    const token = await s.setupToken()
    const authenticator = s.authenticator()
    const options = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'owner@example.com', name: 'Olga', setup_token: token },
    })
    expect(options.status).toBe(200)
    const o = options.body.options
    expect(o.rp).toEqual({ id: RP_ID, name: 'Hark' })
    expect(o.user.name).toBe('owner@example.com')
    expect(o.user.displayName).toBe('Olga')
    expect(o.authenticatorSelection).toMatchObject({
      residentKey: 'required',
      userVerification: 'required',
    })
    expect(o.excludeCredentials).toEqual([])
    expect(o.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toContain(-7)

    const response = await authenticator.register(o)
    const verify = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: options.body.challenge_id, response, name: 'Laptop' },
    })
    expect(verify.status).toBe(200)
    expect(verify.body.user).toMatchObject({
      email: 'owner@example.com',
      name: 'Olga',
      is_owner: true,
    })
    expect(verify.setCookie).toContain('__Host-hark_session=')
    expect(verify.setCookie).toContain('HttpOnly')
    expect(verify.setCookie).toContain('Secure')

    const [passkey] = await s.ctx.store.passkeys.byUser(verify.body.user.id)
    expect(passkey).toMatchObject({ id: authenticator.id, name: 'Laptop', counter: 0 })
    // The session works on the person's routes.
    const channels = await s.request('GET', '/v1/app/channels', { cookie: verify.cookie })
    expect(channels.status).toBe(200)
    expect(channels.body.channels).toEqual([])
    // Setup is closed: the token is gone from the database and the disk.
    expect(existsSync(setupTokenFile(s.ctx))).toBe(false)
    expect((await s.request('GET', '/v1/info')).body.needs_setup).toBe(false)
  })

  test('without the setup token: 403 before any ceremony, and nobody is created', async () => {
    await s.setupToken()
    const reply = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'stranger@example.com' },
    })
    expect(reply.status).toBe(403)
    expect(reply.body.error).toContain('setup')
    expect(await s.ctx.store.users.all()).toEqual([])
  })

  test('a wrong setup token: 403, nobody is created', async () => {
    await s.setupToken()
    const reply = await s.signUp(s.authenticator(), {
      email: 'stranger@example.com',
      setup_token: 'not-the-token',
    })
    expect(reply.status).toBe(403)
    expect(await s.ctx.store.users.all()).toEqual([])
  })

  test('an expired setup token: 403 at options, and at verify when it expires meanwhile', async () => {
    const token = await s.setupToken()
    s.clock.advance(3600_000 + 1)
    const late = await s.signUp(s.authenticator(), { email: 'o@example.com', setup_token: token })
    expect(late.status).toBe(403)

    // The token is still live when the ceremony starts and dead (an hour old) when it ends,
    // well within the challenge's five minutes: verification re-checks admission.
    const fresh = await s.setupToken()
    s.clock.advance(3600_000 - 2000)
    const options = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: fresh },
    })
    expect(options.status).toBe(200)
    const response = await s.authenticator().register(options.body.options)
    s.clock.advance(3000)
    const verify = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
    expect(verify.status).toBe(403)
    expect(verify.setCookie).toBeNull()
    expect(await s.ctx.store.users.all()).toEqual([])
  })

  test('two parallel setup verifications give exactly one owner', async () => {
    const token = await s.setupToken()
    const a = s.authenticator()
    const b = s.authenticator()
    const optionsA = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'a@example.com', setup_token: token },
    })
    const optionsB = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'b@example.com', setup_token: token },
    })
    const [responseA, responseB] = await Promise.all([
      a.register(optionsA.body.options),
      b.register(optionsB.body.options),
    ])
    const replies = await Promise.all([
      s.request('POST', '/v1/auth/passkey/register/verify', {
        json: { challenge_id: optionsA.body.challenge_id, response: responseA },
      }),
      s.request('POST', '/v1/auth/passkey/register/verify', {
        json: { challenge_id: optionsB.body.challenge_id, response: responseB },
      }),
    ])
    const statuses = replies.map((r) => r.status).sort()
    expect(statuses[0]).toBe(200)
    expect([403, 409]).toContain(statuses[1] as number)
    expect(await owners()).toHaveLength(1)
    expect(await s.ctx.store.users.all()).toHaveLength(1)
    const loser = replies.find((r) => r.status !== 200)
    expect(loser?.setCookie).toBeNull()
    // The loser's passkey was not stored either.
    const winner = (await owners())[0]
    expect(await s.ctx.store.passkeys.byUser(winner?.id as string)).toHaveLength(1)
  })

  test('setup is closed once done: the old token and a new sign-up are refused', async () => {
    const token = await s.setupToken()
    const first = await s.signUp(s.authenticator(), { email: 'o@example.com', setup_token: token })
    expect(first.status).toBe(200)
    const again = await s.signUp(s.authenticator(), { email: 'x@example.com', setup_token: token })
    expect(again.status).toBe(409)
    expect(again.body.error).toContain('setup is already done')
    expect(await s.ctx.store.users.all()).toHaveLength(1)
  })

  test('a ceremony in flight keeps the setup token sealed, not readable in the database', async () => {
    const token = await s.setupToken()
    const options = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: token },
    })
    expect(options.status).toBe(200)
    const files = ['hark.db', 'hark.db-wal'].map((f) => join(s.dir, f)).filter(existsSync)
    expect(files.some((f) => readFileSync(f).includes(Buffer.from(token)))).toBe(false)
    const rows = s.ctx.db.query<{ data: string }, []>('SELECT data FROM challenges').all()
    expect(rows).toHaveLength(1)
    expect(rows[0]?.data).not.toContain(token)
  })

  test('an Origin other than the base URL is refused (403); none at all is allowed', async () => {
    const token = await s.setupToken()
    const foreign = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: token },
      origin: 'https://evil.example',
    })
    expect(foreign.status).toBe(403)
    // Checked before the body: a foreign page learns nothing about what it sent.
    const foreignBadBody = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: {},
      origin: 'https://evil.example',
    })
    expect(foreignBadBody.status).toBe(403)
    const forwarded = await s.request('POST', '/v1/auth/passkey/login/options', {
      json: {},
      origin: 'http://hark.test',
      headers: { 'x-forwarded-host': 'hark.test', 'x-forwarded-proto': 'http' },
    })
    expect(forwarded.status).toBe(403)
    const none = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: token },
      origin: null,
    })
    expect(none.status).toBe(200)
  })

  test('the rpID and origin come from the base URL, never from Host or X-Forwarded-*', async () => {
    const reply = await s.request('POST', '/v1/auth/passkey/login/options', {
      json: {},
      origin: null,
      headers: { host: 'evil.example', 'x-forwarded-host': 'evil.example' },
    })
    expect(reply.body.options.rpId).toBe(RP_ID)
    expect(ORIGIN).toBe(`https://${RP_ID}`)
  })
})

describe('bad input on sign-up', () => {
  test('missing or malformed email is 400 naming email', async () => {
    const token = await s.setupToken()
    for (const json of [{ setup_token: token }, { email: 'nope', setup_token: token }]) {
      const reply = await s.request('POST', '/v1/auth/passkey/register/options', { json })
      expect(reply.status).toBe(400)
      expect(reply.body.field).toBe('email')
    }
  })

  test('a malformed response or unknown challenge is 400 naming the field', async () => {
    const token = await s.setupToken()
    const options = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: token },
    })
    const noResponse = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: options.body.challenge_id },
    })
    expect(noResponse.status).toBe(400)
    expect(noResponse.body.field).toBe('response')
    const garbage = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: {
        challenge_id: options.body.challenge_id,
        response: {
          id: 'x',
          rawId: 'x',
          type: 'public-key',
          response: { clientDataJSON: 'e30', attestationObject: 'AA' },
        },
      },
    })
    expect(garbage.status).toBe(400)
    expect(garbage.body.field).toBe('response')
    const unknown = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: {
        challenge_id: 'chal_nope',
        response: await s.authenticator().register(options.body.options),
      },
    })
    expect(unknown.status).toBe(400)
    expect(unknown.body.field).toBe('challenge_id')
    const badName = await s.request('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: 'chal_nope', response: {}, name: '' },
    })
    expect(badName.status).toBe(400)
    const notJson = await s.request('POST', '/v1/auth/passkey/register/options', {
      headers: { 'content-type': 'application/json' },
      body: '{',
      origin: null,
    })
    expect(notJson.status).toBe(400)
    expect(await s.ctx.store.users.all()).toEqual([])
  })
})
