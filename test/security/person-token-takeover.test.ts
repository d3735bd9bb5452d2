import { afterEach, describe, expect, test } from 'bun:test'
import { type Reply, startTestServer, type TestServer } from '../harness.ts'
import { makeSubscription } from '../push/receiver.ts'

/**
 * Issue 31, item 3: the owner's person token (a script's credential, which may leak) must not
 * take over the instance or leave itself a way in that outlives its revocation. Each attack is
 * made with the token alone (403, nothing written), then the same request from a browser
 * session (the app) still works.
 */

let s: TestServer
afterEach(() => s?.close())

const OTHER = 'bea@example.com'

/** A passkey row for the owner, as a finished ceremony leaves it. */
async function ownerPasskey(id: string): Promise<void> {
  const owner = await s.ctx.store.users.byEmail(s.ownerEmail)
  s.ctx.db.run(
    `INSERT INTO passkeys (id, user_id, public_key, counter, backed_up, name, created_at)
     VALUES (?1, ?2, x'00', 0, 0, 'Phone', 1)`,
    [id, owner?.id as string],
  )
}

/** The refusal a person token gets where only a browser session may act. */
async function refusedToToken(reply: Reply, what: string): Promise<void> {
  if (reply.status !== 403)
    throw new Error(`${what}: expected 403, got ${reply.status}: ${reply.text}`)
  expect(reply.headers.get('content-type')).toContain('application/json')
  expect(reply.body.error).toContain('needs a browser session')
}

const byToken = (method: string, path: string, json?: unknown) =>
  s.request(method, path, { token: s.personToken, json, origin: null })

const bySession = async (method: string, path: string, json?: unknown) =>
  s.request(method, path, { cookie: (await s.session()).cookie, json })

describe('a person token cannot administer the instance', () => {
  test('POST /v1/app/invites with a token → 403, no invite made; from a session → 200', async () => {
    s = await startTestServer()
    await refusedToToken(await byToken('POST', '/v1/app/invites', {}), 'invite by token')
    expect(s.ctx.db.query('SELECT count(*) AS n FROM invites').get()).toEqual({ n: 0 })
    const made = await bySession('POST', '/v1/app/invites', {})
    expect(made.status).toBe(200)
    expect(typeof made.body.invite.code).toBe('string')
  })

  test('PATCH /v1/app/settings with a token → 403, registration unchanged; from a session → 200', async () => {
    s = await startTestServer()
    const before = (await bySession('GET', '/v1/app/settings')).body.registration
    expect(before).not.toBe('open')
    await refusedToToken(
      await byToken('PATCH', '/v1/app/settings', { registration: 'open' }),
      'open registration by token',
    )
    // Reading the setting stays open to tokens.
    expect((await byToken('GET', '/v1/app/settings')).body.registration).toBe(before)
    const changed = await bySession('PATCH', '/v1/app/settings', { registration: 'open' })
    expect(changed.status).toBe(200)
    expect(changed.body.registration).toBe('open')
  })

  test('DELETE /v1/app/people/:id with a token → 403, the person stays; from a session → 200', async () => {
    s = await startTestServer()
    await s.addPerson(OTHER)
    const id = (await s.ctx.store.users.byEmail(OTHER))?.id as string
    await refusedToToken(await byToken('DELETE', `/v1/app/people/${id}`), 'remove by token')
    expect(await s.ctx.store.users.byEmail(OTHER)).toBeDefined()
    expect((await bySession('DELETE', `/v1/app/people/${id}`)).status).toBe(200)
    expect(await s.ctx.store.users.byEmail(OTHER)).toBeUndefined()
  })
})

describe('a person token cannot leave itself a way in, nor remove the person’s', () => {
  test('POST /v1/app/push/subscriptions with a token → 403, no device; from a session → 200', async () => {
    s = await startTestServer({ pushAllowHosts: ['127.0.0.1'] })
    // A device registered by a token would receive every question (and a capability to answer
    // it) long after the token is revoked.
    const sub = makeSubscription('http://127.0.0.1:9', 'attacker')
    const json = { endpoint: sub.endpoint, keys: sub.keys }
    await refusedToToken(await byToken('POST', '/v1/app/push/subscriptions', json), 'push by token')
    expect(s.ctx.db.query('SELECT count(*) AS n FROM push_subscriptions').get()).toEqual({ n: 0 })
    expect((await bySession('POST', '/v1/app/push/subscriptions', json)).status).toBe(200)
  })

  test('DELETE /v1/app/passkeys/:id with a token → 403, the passkey stays; from a session → 200', async () => {
    s = await startTestServer()
    await ownerPasskey('cred_phone')
    await ownerPasskey('cred_laptop')
    await refusedToToken(await byToken('DELETE', '/v1/app/passkeys/cred_phone'), 'passkey by token')
    expect(await s.ctx.store.passkeys.byId('cred_phone')).toBeDefined()
    expect((await bySession('DELETE', '/v1/app/passkeys/cred_phone')).status).toBe(200)
    expect(await s.ctx.store.passkeys.byId('cred_phone')).toBeUndefined()
  })
})

describe('what a person token may still do with these', () => {
  test('list people, invites and passkeys, revoke an invite, remove a push device', async () => {
    s = await startTestServer({ pushAllowHosts: ['127.0.0.1'] })
    const invite = (await bySession('POST', '/v1/app/invites', {})).body.invite
    const sub = makeSubscription('http://127.0.0.1:9', 'phone')
    const device = (
      await bySession('POST', '/v1/app/push/subscriptions', {
        endpoint: sub.endpoint,
        keys: sub.keys,
      })
    ).body.subscription
    expect((await byToken('GET', '/v1/app/people')).status).toBe(200)
    expect((await byToken('GET', '/v1/app/invites')).body.invites).toHaveLength(1)
    expect((await byToken('GET', '/v1/app/passkeys')).status).toBe(200)
    // Shutting a door stays open to a script: revoking an invite, removing a device.
    expect((await byToken('DELETE', `/v1/app/invites/${invite.id}`)).status).toBe(200)
    expect((await byToken('DELETE', `/v1/app/push/subscriptions/${device.id}`)).status).toBe(200)
  })
})

test('the OpenAPI document gives each of these routes the browser session alone', async () => {
  s = await startTestServer()
  const spec = (await s.request('GET', '/v1/openapi.json')).body as {
    paths: Record<string, Record<string, { security?: unknown }>>
  }
  const sessionOnly: [string, string][] = [
    ['/v1/app/invites', 'post'],
    ['/v1/app/settings', 'patch'],
    ['/v1/app/people/{id}', 'delete'],
    ['/v1/app/push/subscriptions', 'post'],
    ['/v1/app/passkeys/{id}', 'delete'],
  ]
  for (const [path, method] of sessionOnly) {
    expect({ path, method, security: spec.paths[path]?.[method]?.security }).toEqual({
      path,
      method,
      security: [{ session: [] }],
    })
  }
})
