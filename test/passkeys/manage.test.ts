import { afterEach, describe, expect, test } from 'bun:test'
import type { Mailer } from '../../src/core/mailer.ts'
import { addPersonToken } from '../../src/people/service.ts'
import { type FreshServer, startFreshServer } from './fixture.ts'

let s: FreshServer
afterEach(() => s.close())

const fakeMailer: Mailer = { send: async () => {} }

/** Another person, signed up with a passkey in open mode. */
async function otherPerson(email = 'bea@example.com') {
  await s.ctx.store.settings.set('registration', 'open')
  const authenticator = s.authenticator()
  const reply = await s.signUp(authenticator, { email })
  expect(reply.status).toBe(200)
  return { authenticator, cookie: reply.cookie as string, user: reply.body.user }
}

describe("the person's passkeys", () => {
  test('add a second passkey, list, rename, remove', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const first = await s.request('GET', '/v1/app/passkeys', { cookie: owner.cookie })
    expect(first.status).toBe(200)
    expect(first.body.passkeys).toEqual([
      {
        id: owner.authenticator.id,
        name: 'Passkey',
        created_at: expect.any(Number),
        last_used_at: null,
        device_type: 'singleDevice',
        backed_up: false,
        // As `hark keys` prints it (test/web/passkey-fingerprints.test.ts compares the two).
        fingerprint: expect.stringMatching(/^([0-9a-f]{4} ){7}[0-9a-f]{4}$/),
      },
    ])

    const phone = s.authenticator()
    s.clock.advance(1000) // listed in the order they were added
    const options = await s.request('POST', '/v1/app/passkeys/options', { cookie: owner.cookie })
    expect(options.status).toBe(200)
    // The person's existing passkeys are excluded, so one authenticator is not registered twice.
    expect(options.body.options.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([
      owner.authenticator.id,
    ])
    expect(options.body.options.user.name).toBe('owner@example.com')
    await expect(owner.authenticator.register(options.body.options)).rejects.toThrow()
    const response = await phone.register(options.body.options)
    const added = await s.request('POST', '/v1/app/passkeys/verify', {
      cookie: owner.cookie,
      json: { challenge_id: options.body.challenge_id, response, name: '  Phone ' },
    })
    expect(added.status).toBe(200)
    expect(added.body.passkey).toMatchObject({ id: phone.id, name: 'Phone', last_used_at: null })

    // The new passkey logs in as the same person.
    const login = await s.logIn(phone)
    expect(login.status).toBe(200)
    expect(login.body.user.id).toBe(owner.user.id)

    const list = await s.request('GET', '/v1/app/passkeys', { cookie: owner.cookie })
    expect(list.body.passkeys.map((p: { name: string }) => p.name)).toEqual(['Passkey', 'Phone'])
    expect(list.body.passkeys[1].last_used_at).toBe(s.clock.now())

    const renamed = await s.request('PATCH', `/v1/app/passkeys/${owner.authenticator.id}`, {
      cookie: owner.cookie,
      json: { name: 'Laptop' },
    })
    expect(renamed.status).toBe(200)
    expect(renamed.body.passkey).toMatchObject({ id: owner.authenticator.id, name: 'Laptop' })

    const removed = await s.request('DELETE', `/v1/app/passkeys/${phone.id}`, {
      cookie: owner.cookie,
    })
    expect(removed.status).toBe(200)
    expect(removed.body).toEqual({ ok: true })
    const after = await s.request('GET', '/v1/app/passkeys', { cookie: owner.cookie })
    expect(after.body.passkeys.map((p: { name: string }) => p.name)).toEqual(['Laptop'])
    // A removed passkey no longer logs in.
    expect((await s.logIn(phone)).status).toBe(401)
  })

  test('removing the last passkey is refused (409) without email login', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const reply = await s.request('DELETE', `/v1/app/passkeys/${owner.authenticator.id}`, {
      cookie: owner.cookie,
    })
    expect(reply.status).toBe(409)
    expect(reply.body.error).toContain('last passkey')
    expect(await s.ctx.store.passkeys.byUser(owner.user.id)).toHaveLength(1)
  })

  test('with email login available, the last passkey may go', async () => {
    s = await startFreshServer({ mailer: fakeMailer })
    const owner = await s.setUpOwner()
    const reply = await s.request('DELETE', `/v1/app/passkeys/${owner.authenticator.id}`, {
      cookie: owner.cookie,
    })
    expect(reply.status).toBe(200)
    expect(await s.ctx.store.passkeys.byUser(owner.user.id)).toHaveLength(0)
  })

  test("another person's passkey is 404, like an unknown one", async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const bea = await otherPerson()
    const path = `/v1/app/passkeys/${owner.authenticator.id}`
    const rename = await s.request('PATCH', path, { cookie: bea.cookie, json: { name: 'Mine' } })
    expect(rename.status).toBe(404)
    expect(rename.body.error).toBe('passkey not found')
    const remove = await s.request('DELETE', path, { cookie: bea.cookie })
    expect(remove.status).toBe(404)
    const unknown = await s.request('DELETE', '/v1/app/passkeys/nope', { cookie: bea.cookie })
    expect(unknown).toMatchObject({ status: 404, body: { error: 'passkey not found' } })
    const list = await s.request('GET', '/v1/app/passkeys', { cookie: bea.cookie })
    expect(list.body.passkeys.map((p: { id: string }) => p.id)).toEqual([bea.authenticator.id])
    expect((await s.ctx.store.passkeys.byId(owner.authenticator.id))?.name).toBe('Passkey')
  })

  test('options fetched by one person cannot be completed by another', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const bea = await otherPerson()
    const options = await s.request('POST', '/v1/app/passkeys/options', { cookie: owner.cookie })
    const response = await s.authenticator().register(options.body.options)
    const reply = await s.request('POST', '/v1/app/passkeys/verify', {
      cookie: bea.cookie,
      json: { challenge_id: options.body.challenge_id, response },
    })
    expect(reply.status).toBe(400)
    expect(reply.body.field).toBe('challenge_id')
    expect(await s.ctx.store.passkeys.byUser(bea.user.id)).toHaveLength(1)
    expect(await s.ctx.store.passkeys.byUser(owner.user.id)).toHaveLength(1)
  })

  test('an added passkey is verified like any other: replay and wrong origin fail', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/app/passkeys/options', { cookie: owner.cookie })
    const bad = await s.authenticator().register(options.body.options, {
      origin: 'https://evil.example',
    })
    const json = { challenge_id: options.body.challenge_id, response: bad }
    const first = await s.request('POST', '/v1/app/passkeys/verify', { cookie: owner.cookie, json })
    expect(first.status).toBe(400)
    expect(first.body.field).toBe('response')
    const again = await s.request('POST', '/v1/app/passkeys/verify', { cookie: owner.cookie, json })
    expect(again.status).toBe(400)
    expect(again.body.field).toBe('challenge_id')
    expect(await s.ctx.store.passkeys.byUser(owner.user.id)).toHaveLength(1)
  })

  test('the same credential cannot be registered twice (409)', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const options = await s.request('POST', '/v1/app/passkeys/options', { cookie: owner.cookie })
    // An authenticator that ignores excludeCredentials and presents the same credential id.
    const clone = s.authenticator()
    Object.defineProperty(clone, 'credentialId', { value: owner.authenticator.credentialId })
    const response = await clone.register({ ...options.body.options, excludeCredentials: [] })
    const reply = await s.request('POST', '/v1/app/passkeys/verify', {
      cookie: owner.cookie,
      json: { challenge_id: options.body.challenge_id, response },
    })
    expect(reply.status).toBe(409)
    expect(await s.ctx.store.passkeys.byUser(owner.user.id)).toHaveLength(1)
  })

  test('bad input is 400 naming the field', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const path = `/v1/app/passkeys/${owner.authenticator.id}`
    for (const json of [
      {},
      { name: '' },
      { name: '   ' },
      { name: 'x'.repeat(101) },
      { name: 5 },
    ]) {
      const reply = await s.request('PATCH', path, { cookie: owner.cookie, json })
      expect(reply.status).toBe(400)
      expect(reply.body.field).toBe('name')
    }
    const verify = await s.request('POST', '/v1/app/passkeys/verify', {
      cookie: owner.cookie,
      json: { challenge_id: 'chal_x' },
    })
    expect(verify.status).toBe(400)
    expect(verify.body.field).toBe('response')
  })

  test('the routes need a session or a person token; cookie writes need our Origin', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    expect((await s.request('GET', '/v1/app/passkeys')).status).toBe(401)
    expect((await s.request('POST', '/v1/app/passkeys/options')).status).toBe(401)
    const foreign = await s.request('DELETE', `/v1/app/passkeys/${owner.authenticator.id}`, {
      cookie: owner.cookie,
      origin: 'https://evil.example',
    })
    expect(foreign.status).toBe(403)
    const { token } = await addPersonToken(s.ctx, { email: 'owner@example.com' })
    const byToken = await s.request('GET', '/v1/app/passkeys', { token, origin: null })
    expect(byToken.status).toBe(200)
    expect(byToken.body.passkeys).toHaveLength(1)
  })

  test('adding a passkey needs a browser session: a person token is 403 at options and verify', async () => {
    s = await startFreshServer()
    const owner = await s.setUpOwner()
    const { token } = await addPersonToken(s.ctx, { email: 'owner@example.com' })
    const options = await s.request('POST', '/v1/app/passkeys/options', { token, origin: null })
    expect(options.status).toBe(403)
    expect(options.body.error).toContain('browser session')
    // Not even with options a session fetched: the token cannot finish the ceremony.
    const fromSession = await s.request('POST', '/v1/app/passkeys/options', {
      cookie: owner.cookie,
    })
    expect(fromSession.status).toBe(200)
    const response = await s.authenticator().register(fromSession.body.options)
    const verify = await s.request('POST', '/v1/app/passkeys/verify', {
      token,
      origin: null,
      json: { challenge_id: fromSession.body.challenge_id, response },
    })
    expect(verify.status).toBe(403)
    expect(verify.body.error).toContain('browser session')
    expect(await s.ctx.store.passkeys.byUser(owner.user.id)).toHaveLength(1)
    // Renaming and removing stay open to the token.
    const renamed = await s.request('PATCH', `/v1/app/passkeys/${owner.authenticator.id}`, {
      token,
      origin: null,
      json: { name: 'Laptop' },
    })
    expect(renamed.status).toBe(200)
  })
})
