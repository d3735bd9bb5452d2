import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { HarkError } from '../../src/core/errors.ts'
import { createAdmittedPerson } from '../../src/people/enrol/admission.ts'
import { addUser } from '../../src/people/service.ts'
import {
  checkSetupToken,
  issueSetupToken,
  SETUP_KEY,
  setupTokenFile,
} from '../../src/people/setup.ts'
import { BASE, startTestServer, TestClock, type TestServer } from '../harness.ts'

let f: TestServer
afterEach(() => f?.close())

const HOUR = 3600 * 1000

/** The token out of `http://hark.test/setup#token=...`. */
const tokenOf = (link: string) => new URL(link).hash.replace(/^#token=/, '')

/** The HTTP status `fn` throws (a HarkError), or 0 when it does not throw. */
async function statusOf(fn: () => unknown): Promise<number> {
  try {
    await fn()
  } catch (error) {
    if (error instanceof HarkError) return error.status
    throw error
  }
  return 0
}

/** Creates the owner as the setup wizard does, with the setup token. */
const becomeOwner = async (token: string | undefined, email = 'first@example.com') =>
  await createAdmittedPerson(f.ctx, { setup_token: token }, { email }, async (user) => user)

describe('the setup token', () => {
  test('is written 0600 to setup-token in the data dir, holding the setup link', async () => {
    f = await startTestServer({ owner: false })
    const link = (await issueSetupToken(f.ctx)) as string
    expect(link).toStartWith(`${BASE}/setup#token=`)
    const token = tokenOf(link)
    expect(token).toMatch(/^[0-9A-Za-z]{32}$/)
    const file = setupTokenFile(f.ctx)
    expect(file).toBe(`${f.dir}/setup-token`)
    expect(statSync(file).mode & 0o777).toBe(0o600)
    expect(readFileSync(file, 'utf8')).toBe(`${link}\n`)
  })

  test('is stored only as a hash: the database never holds the token itself', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    const stored = (await f.ctx.store.settings.get(SETUP_KEY)) as string
    expect(stored).toBeString()
    expect(stored).not.toContain(token)
    const dump = JSON.stringify(f.ctx.db.query('SELECT * FROM settings').all())
    expect(dump).not.toContain(token)
  })

  test('the live token passes; a wrong, empty, missing or non-string one is 403', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, token))).toBe(0)
    for (const bad of [`${token}x`, token.slice(1), '', undefined, null, 42, [token], { token }]) {
      expect(await statusOf(async () => await checkSetupToken(f.ctx, bad))).toBe(403)
    }
  })

  test('before any token was issued, nothing passes', async () => {
    f = await startTestServer({ owner: false })
    expect(await statusOf(async () => await checkSetupToken(f.ctx, 'anything'))).toBe(403)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, undefined))).toBe(403)
  })

  test('a new token replaces the old one, in the database and in the file', async () => {
    f = await startTestServer({ owner: false })
    const first = (await issueSetupToken(f.ctx)) as string
    const second = (await issueSetupToken(f.ctx)) as string
    expect(second).not.toBe(first)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, tokenOf(first)))).toBe(403)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, tokenOf(second)))).toBe(0)
    expect(readFileSync(setupTokenFile(f.ctx), 'utf8')).toBe(`${second}\n`)
    expect(statSync(setupTokenFile(f.ctx)).mode & 0o777).toBe(0o600)
  })

  test('expires after one hour', async () => {
    const clock = new TestClock()
    f = await startTestServer({ owner: false, clock })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    clock.advance(HOUR - 1)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, token))).toBe(0)
    clock.advance(1)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, token))).toBe(403)
    // A restart (a new token) is the way back in.
    const fresh = tokenOf((await issueSetupToken(f.ctx)) as string)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, fresh))).toBe(0)
  })

  test('is refused (409) once an owner exists, and is then gone from the database and disk', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    const { user } = await becomeOwner(token)
    expect(user.is_owner).toBe(1)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, token))).toBe(409)
    expect(await f.ctx.store.settings.get(SETUP_KEY)).toBeUndefined()
    expect(existsSync(setupTokenFile(f.ctx))).toBe(false)
  })

  test('is not issued once there is an owner, and a stale file is removed', async () => {
    f = await startTestServer({ owner: false })
    await issueSetupToken(f.ctx)
    // An owner made out of band (`hark admin user add --owner`) while the file lay there.
    await addUser(f.ctx, { email: 'admin@example.com', owner: true })
    expect(existsSync(setupTokenFile(f.ctx))).toBe(true)
    expect(await issueSetupToken(f.ctx)).toBeUndefined()
    expect(existsSync(setupTokenFile(f.ctx))).toBe(false)
    expect(await f.ctx.store.settings.get(SETUP_KEY)).toBeUndefined()
  })
})

describe('creating the owner', () => {
  test('needs the setup token: without one or with a wrong one it is 403 and nobody is made', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    expect(await statusOf(async () => await becomeOwner(undefined))).toBe(403)
    expect(await statusOf(async () => await becomeOwner(`${token}!`))).toBe(403)
    expect(await f.ctx.store.users.all()).toEqual([])
    expect(existsSync(setupTokenFile(f.ctx))).toBe(true)
  })

  test('with the token, makes exactly one owner: a second use of the token is 409', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    await becomeOwner(token, 'first@example.com')
    expect(await statusOf(async () => await becomeOwner(token, 'second@example.com'))).toBe(409)
    const people = await f.ctx.store.users.all()
    expect(people.map((u) => [u.email, u.is_owner])).toEqual([['first@example.com', 1]])
  })

  test('an invalid email is 400 naming email, and the token still works afterwards', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    for (const email of ['', 'not-an-email', 'a@b', ' @x.y']) {
      let field: string | undefined
      try {
        await becomeOwner(token, email)
      } catch (error) {
        expect((error as HarkError).status).toBe(400)
        field = (error as HarkError).field
      }
      expect(field).toBe('email')
    }
    expect(await f.ctx.store.users.all()).toEqual([])
    expect(await statusOf(async () => await checkSetupToken(f.ctx, token))).toBe(0)
  })

  test('a failure inside the transaction leaves the token in place and no owner behind', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    expect(
      async () =>
        await createAdmittedPerson(
          f.ctx,
          { setup_token: token },
          { email: 'a@example.com' },
          () => {
            throw new Error('passkey could not be stored')
          },
        ),
    ).toThrow('passkey could not be stored')
    expect(await f.ctx.store.users.all()).toEqual([])
    expect(existsSync(setupTokenFile(f.ctx))).toBe(true)
    expect(await statusOf(async () => await checkSetupToken(f.ctx, token))).toBe(0)
  })
})

describe('GET /v1/info during first run', () => {
  test('says needs_setup until the owner exists, and shows the registration mode', async () => {
    f = await startTestServer({ owner: false })
    const before = await f.request('GET', '/v1/info')
    expect(before.status).toBe(200)
    expect(before.body.needs_setup).toBe(true)
    expect(before.body.registration).toBe('closed')
    await becomeOwner(tokenOf((await issueSetupToken(f.ctx)) as string))
    const after = await f.request('GET', '/v1/info')
    expect(after.body.needs_setup).toBe(false)
  })

  test('never reveals the setup token', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    const info = await f.request('GET', '/v1/info')
    expect(JSON.stringify(info.body)).not.toContain(token)
  })
})

describe('the setup wizard over HTTP (passkey sign-up options)', () => {
  const options = (json: unknown, origin?: string | null) =>
    f.request('POST', '/v1/auth/passkey/register/options', { json, origin })

  test('a stranger without the setup token is 403; with it the ceremony starts', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    expect((await options({ email: 'me@example.com' })).status).toBe(403)
    expect((await options({ email: 'me@example.com', setup_token: 'guess' })).status).toBe(403)
    const ok = await options({ email: 'me@example.com', setup_token: token })
    expect(ok.status).toBe(200)
    expect(ok.body.challenge_id).toBeString()
    expect(await f.ctx.store.users.all()).toEqual([])
  })

  test('a foreign Origin is 403 even with the token', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    const res = await options({ email: 'me@example.com', setup_token: token }, 'https://evil.test')
    expect(res.status).toBe(403)
  })

  test('once an owner exists, the setup token is 409', async () => {
    f = await startTestServer({ owner: false })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    await becomeOwner(token)
    const res = await options({ email: 'me@example.com', setup_token: token })
    expect(res.status).toBe(409)
    expect(res.body.error).toContain('setup')
  })

  test('after an hour the link no longer starts a sign-up', async () => {
    const clock = new TestClock()
    f = await startTestServer({ owner: false, clock })
    const token = tokenOf((await issueSetupToken(f.ctx)) as string)
    clock.advance(HOUR)
    expect((await options({ email: 'me@example.com', setup_token: token })).status).toBe(403)
  })
})
