import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { issueSignInLink, SIGN_IN_LINK_TTL_MS } from '../../src/people/enrol/sign-in-links.ts'
import { addUser } from '../../src/people/service.ts'
import type { UserRow } from '../../src/people/store.ts'
import type { SoftwareAuthenticator } from './authenticator.ts'
import { type FreshServer, ORIGIN, startFreshServer } from './fixture.ts'

let s: FreshServer
beforeEach(async () => {
  s = await startFreshServer()
})
afterEach(() => s.close())

/** A person as `hark admin user add` makes one: no passkey, no way in yet. */
const provision = async (email = 'pat@example.com', owner = false) =>
  await addUser(s.ctx, { email, owner, name: 'Pat' })
/** The secret of a new sign-in link (`.../enrol#SECRET`). */
const linkFor = async (user: UserRow) => {
  const { link } = await issueSignInLink(s.ctx, user, ORIGIN)
  expect(link).toStartWith(`${ORIGIN}/enrol#`)
  return new URL(link).hash.slice(1)
}
const options = (code: unknown) =>
  s.request('POST', '/v1/auth/passkey/link/options', { json: { code } })
async function enrol(code: string, authenticator: SoftwareAuthenticator = s.authenticator()) {
  const started = await options(code)
  if (started.status !== 200) return started
  const response = await authenticator.register(started.body.options)
  return s.request('POST', '/v1/auth/passkey/link/verify', {
    json: { challenge_id: started.body.challenge_id, response, name: 'Pat phone' },
  })
}

describe('POST /v1/auth/passkey/link/options and /link/verify (sign-in links)', () => {
  test('a person made on the command line enrols a passkey, is signed in, and logs in with it later', async () => {
    const user = await provision()
    const code = await linkFor(user)
    const started = await options(code)
    expect(started.status).toBe(200)
    // The ceremony names the account the link is for.
    expect(started.body.options.user.name).toBe('pat@example.com')
    expect(started.body.options.rp.id).toBe(s.rpId)
    const authenticator = s.authenticator()
    const response = await authenticator.register(started.body.options)
    const done = await s.request('POST', '/v1/auth/passkey/link/verify', {
      json: { challenge_id: started.body.challenge_id, response, name: 'Pat phone' },
    })
    expect(done.status).toBe(200)
    expect(done.body.user).toEqual({
      id: user.id,
      email: 'pat@example.com',
      name: 'Pat',
      is_owner: false,
    })
    expect(done.cookie).toStartWith('__Host-hark_session=')
    const me = await s.request('GET', '/v1/app/me', { cookie: done.cookie as string })
    expect(me.status).toBe(200)
    expect(me.body.user.email).toBe('pat@example.com')
    const keys = await s.ctx.store.passkeys.byUser(user.id)
    expect(keys.map((k) => [k.id, k.name])).toEqual([[authenticator.id, 'Pat phone']])
    const login = await s.logIn(authenticator)
    expect(login.status).toBe(200)
    expect(login.body.user.id).toBe(user.id)
  })

  test('a link serves once: opened again it is refused, and two ceremonies started with it enrol one passkey', async () => {
    const user = await provision()
    const code = await linkFor(user)
    const first = await options(code)
    const second = await options(code)
    expect([first.status, second.status]).toEqual([200, 200])
    const a = s.authenticator()
    const b = s.authenticator()
    const finish = async (started: typeof first, who: SoftwareAuthenticator) =>
      s.request('POST', '/v1/auth/passkey/link/verify', {
        json: {
          challenge_id: started.body.challenge_id,
          response: await who.register(started.body.options),
        },
      })
    expect((await finish(first, a)).status).toBe(200)
    const late = await finish(second, b)
    expect(late.status).toBe(403)
    expect(late.body.error).toContain('sign-in link is not valid')
    expect(late.setCookie).toBeNull()
    expect(await s.ctx.store.passkeys.byUser(user.id)).toHaveLength(1)
    const again = await options(code)
    expect(again.status).toBe(403)
    expect(again.body.error).toContain('ask for a new one')
  })

  test('a link expires after 24 hours', async () => {
    const code = await linkFor(await provision())
    s.clock.advance(SIGN_IN_LINK_TTL_MS - 1000)
    expect((await options(code)).status).toBe(200)
    s.clock.advance(1000)
    const late = await options(code)
    expect(late.status).toBe(403)
    expect(late.body.error).toContain('expired')
  })

  test('a link that expires between options and verify enrols nothing', async () => {
    const user = await provision()
    const code = await linkFor(user)
    s.clock.advance(SIGN_IN_LINK_TTL_MS - 60_000)
    const started = await options(code)
    expect(started.status).toBe(200)
    const response = await s.authenticator().register(started.body.options)
    // The link's last minute passes; the ceremony (5 minutes) is still live.
    s.clock.advance(60_000)
    const done = await s.request('POST', '/v1/auth/passkey/link/verify', {
      json: { challenge_id: started.body.challenge_id, response },
    })
    expect(done.status).toBe(403)
    expect(done.body.error).toContain('sign-in link is not valid')
    expect(await s.ctx.store.passkeys.byUser(user.id)).toHaveLength(0)
  })

  test('a new link (hark admin user link) voids the earlier one; a lost phone: the new passkey joins the old', async () => {
    const user = await provision()
    const old = s.authenticator()
    expect((await enrol(await linkFor(user), old)).status).toBe(200)
    const stale = await linkFor(user)
    const fresh = await linkFor(user)
    expect((await options(stale)).status).toBe(403)
    const started = await options(fresh)
    // The passkey this person already has is excluded: the same device is not enrolled twice.
    expect(started.body.options.excludeCredentials.map((c: { id: string }) => c.id)).toEqual([
      old.id,
    ])
    const phone = s.authenticator()
    expect((await enrol(fresh, phone)).status).toBe(200)
    expect(await s.ctx.store.passkeys.byUser(user.id)).toHaveLength(2)
    expect((await s.logIn(old)).status).toBe(200)
    expect((await s.logIn(phone)).status).toBe(200)
  })

  test('the owner made with --owner signs in the same way; a link signs in only its own person', async () => {
    const owner = await provision('boss@example.com', true)
    const other = await provision('other@example.com')
    const done = await enrol(await linkFor(owner))
    expect(done.status).toBe(200)
    expect(done.body.user).toMatchObject({ email: 'boss@example.com', is_owner: true })
    expect(await s.ctx.store.passkeys.byUser(other.id)).toHaveLength(0)
  })

  test('bad input: a missing, empty or unknown code, a challenge of another ceremony', async () => {
    const missing = await s.request('POST', '/v1/auth/passkey/link/options', { json: {} })
    expect(missing.status).toBe(400)
    expect(missing.body.error).toContain('code')
    const wrongType = await options(42)
    expect(wrongType.status).toBe(400)
    expect(wrongType.body.error).toContain('code')
    const empty = await options('')
    expect(empty.status).toBe(400)
    expect(empty.body.error).toContain('code')
    const unknown = await options('no-such-link')
    expect(unknown.status).toBe(403)
    // A sign-up ceremony's challenge cannot finish a link.
    const user = await provision()
    await linkFor(user)
    const login = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const response = await s.authenticator().register({
      ...(await options(await linkFor(user))).body.options,
    })
    const crossed = await s.request('POST', '/v1/auth/passkey/link/verify', {
      json: { challenge_id: login.body.challenge_id, response },
    })
    expect(crossed.status).toBe(400)
    expect(crossed.body.error).toContain('challenge_id')
    expect(await s.ctx.store.passkeys.byUser(user.id)).toHaveLength(0)
  })

  test('another site cannot drive it (Origin checked)', async () => {
    const code = await linkFor(await provision())
    const forged = await s.request('POST', '/v1/auth/passkey/link/options', {
      json: { code },
      origin: 'https://evil.example',
    })
    expect(forged.status).toBe(403)
  })
})
