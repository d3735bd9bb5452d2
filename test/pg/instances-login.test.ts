import { beforeAll, describe, expect, test } from 'bun:test'
import type { Served } from '../binary/process.ts'
import type { MailTrap } from '../email/mail-trap.ts'
import { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { call, ORIGIN, useTwoInstances, within } from './two-instances.ts'

/**
 * Two `dist/hark serve` instances on one Postgres (test/pg/two-instances.ts): a login, a sign-in
 * code or a pairing begun on one ends on the other, and what it gives works on both.
 */
const skip = skipWithoutPostgres()

let trap: MailTrap
let a: Served
let b: Served
/** The owner's browser session (what only the app may do: push devices, invites). */
let ownerApp: string
/** Ivy's session, from her passkey login (made on A). */
let ivy = ''

describe.skipIf(skip)('two hark serve instances on one Postgres', () => {
  const instances = useTwoInstances()
  beforeAll(() => {
    ;({ a, b, trap, ownerApp } = instances())
  })

  test('a passkey added on A, a login begun on B ends on A', async () => {
    // The person's session comes from a login on a passkey; they add one through a sign-in
    // link made by `hark admin` in the real flow. Here: register through an invite made on B.
    const invite = await call(b, 'POST', '/v1/app/invites', {
      cookie: ownerApp,
      json: { email: 'ivy@example.com' },
    })
    expect(invite.status).toBe(200)
    const code = (invite.body.invite?.code ?? invite.body.code) as string
    expect(typeof code).toBe('string')
    const authenticator = new SoftwareAuthenticator(ORIGIN)
    const options = await call(a, 'POST', '/v1/auth/passkey/register/options', {
      json: { email: 'ivy@example.com', invite: code },
    })
    expect(options.status).toBe(200)
    const registered = await call(b, 'POST', '/v1/auth/passkey/register/verify', {
      json: {
        challenge_id: options.body.challenge_id,
        response: await authenticator.register(options.body.options),
      },
    })
    expect(registered.status).toBe(200)
    const login = await call(b, 'POST', '/v1/auth/passkey/login/options', { json: {} })
    expect(login.status).toBe(200)
    const loggedIn = await call(a, 'POST', '/v1/auth/passkey/login/verify', {
      json: {
        challenge_id: login.body.challenge_id,
        response: await authenticator.login(login.body.options),
      },
    })
    expect(loggedIn.status).toBe(200)
    expect(loggedIn.body.user.email).toBe('ivy@example.com')
    // The session cookie made on A works on B.
    const cookie = (loggedIn.headers.get('set-cookie') ?? '').split(';')[0] as string
    const me = await call(b, 'GET', '/v1/app/me', { cookie })
    expect(me.status).toBe(200)
    expect(me.body.user.email).toBe('ivy@example.com')
    ivy = cookie
  })

  test('an email code asked on A logs in on B, once', async () => {
    const asked = await call(a, 'POST', '/v1/auth/email/start', {
      json: { email: 'owner@example.com', purpose: 'login' },
    })
    expect(asked.status).toBe(200)
    const { code } = await trap.next('owner@example.com', 10_000)
    expect(code).toMatch(/^\d{8}$/)
    const verify = (at: Served) =>
      call(at, 'POST', '/v1/auth/email/verify', {
        json: { email: 'owner@example.com', purpose: 'login', code },
      })
    const done = await verify(b)
    expect(done.status).toBe(200)
    expect(done.body.user.email).toBe('owner@example.com')
    expect((await verify(a)).status).toBe(400)
  })

  test("hark init's pairing: started and waited for on A, approved on B, its token works on both", async () => {
    expect(ivy).not.toBe('')
    const started = await call(a, 'POST', '/v1/pair/start', { json: { label: 'laptop agent' } })
    expect(started.status).toBe(200)
    const { device_code, user_code } = started.body
    const waiting = call(a, 'POST', '/v1/pair/token?wait=25', { json: { device_code } })
    expect(await within(waiting, 300)).toBe('pending')
    const approved = await call(
      b,
      'POST',
      `/v1/app/pairings/${encodeURIComponent(user_code)}/approve`,
      {
        cookie: ivy,
        json: {},
      },
    )
    expect(approved.status).toBe(200)
    const got = await within(waiting, 5_000)
    expect(got).not.toBe('pending')
    if (got === 'pending') return
    expect(got.body.status).toBe('approved')
    const token = got.body.token as string
    // Redeemed once: the same device code answers nothing more, on either instance.
    const again = await call(b, 'POST', '/v1/pair/token', { json: { device_code } })
    expect(again.status).toBe(404)
    for (const at of [a, b]) {
      const sent = await call(at, 'POST', '/v1/messages', {
        token,
        json: { body: { text: 'paired' } },
      })
      expect(sent.status).toBe(200)
    }
  })
})
