import { afterEach, describe, expect, test } from 'bun:test'
import type { Mailer, OutgoingMail } from '../../src/core/mailer.ts'
import { addUser } from '../../src/people/service.ts'
import { count } from '../people/util.ts'
import type { SoftwareAuthenticator } from './authenticator.ts'
import { type FreshServer, startFreshServer } from './fixture.ts'

/**
 * Account pre-hijacking: a passkey sign-up names an address nobody proved. The address's owner
 * logging in by email code later must not share the account with whoever made it.
 */

let s: FreshServer
afterEach(() => s?.close())

const VICTIM = 'victim@example.com'

/** A server with SMTP (mail kept in `sent`), its owner set up, and registration open. */
async function start() {
  const sent: OutgoingMail[] = []
  const mailer: Mailer = {
    send: async (mail) => {
      sent.push(mail)
    },
  }
  s = await startFreshServer({ mailer })
  const owner = await s.setUpOwner()
  await s.ctx.store.settings.set('registration', 'open')
  return { sent, owner }
}

const verified = async (email: string) => (await s.ctx.store.users.byEmail(email))?.email_verified

/** Logs in by email code as the mailbox's owner would; returns the reply (cookie set). */
async function emailLogIn(sent: OutgoingMail[], email: string) {
  const started = await s.request('POST', '/v1/auth/email/start', {
    json: { email, purpose: 'login' },
  })
  expect(started.status).toBe(200)
  await Bun.sleep(5) // login mail goes out after the answer
  const mail = sent.filter((m) => m.to === email).at(-1)
  const code = /^\s+(\d{8})$/m.exec(mail?.text ?? '')?.[1]
  if (!code) throw new Error(`no login code mailed to ${email}`)
  return s.request('POST', '/v1/auth/email/verify', { json: { email, purpose: 'login', code } })
}

/** A passkey sign-up; returns its authenticator and session cookie. */
async function passkeySignUp(email: string, invite?: string) {
  const authenticator = s.authenticator()
  const reply = await s.signUp(authenticator, { email, invite })
  expect(reply.status).toBe(200)
  return { authenticator, cookie: reply.cookie as string, id: reply.body.user.id as string }
}

const me = (cookie: string) => s.request('GET', '/v1/app/me', { cookie, origin: null })

describe('users.email_verified', () => {
  test('a passkey sign-up in open mode or with an unbound invite is unverified', async () => {
    const { owner } = await start()
    await passkeySignUp('open@example.com')
    expect(await verified('open@example.com')).toBe(0)
    await passkeySignUp('unbound@example.com', await s.invite(owner.user.id))
    expect(await verified('unbound@example.com')).toBe(0)
  })

  test('verified: the owner, an invite bound to the address, email-code sign-up, hark admin', async () => {
    const { sent, owner } = await start()
    expect(await verified('owner@example.com')).toBe(1)
    await passkeySignUp('bound@example.com', await s.invite(owner.user.id, 'Bound@example.com'))
    expect(await verified('bound@example.com')).toBe(1)
    const started = await s.request('POST', '/v1/auth/email/start', {
      json: { email: 'coded@example.com', purpose: 'signup' },
    })
    expect(started.status).toBe(200)
    const code = /^\s+(\d{8})$/m.exec(sent.at(-1)?.text ?? '')?.[1]
    const signedUp = await s.request('POST', '/v1/auth/email/verify', {
      json: { email: 'coded@example.com', purpose: 'signup', code },
    })
    expect(signedUp.status).toBe(200)
    expect(await verified('coded@example.com')).toBe(1)
    expect((await addUser(s.ctx, { email: 'admin-made@example.com' })).email_verified).toBe(1)
  })
})

describe("an unverified account's first email-code login", () => {
  /** The attacker signs up with the victim's address and entrenches: token, push device. */
  async function preHijack(sent: OutgoingMail[]) {
    const attacker = await passkeySignUp(VICTIM)
    const made = await s.request('POST', '/v1/app/tokens', {
      cookie: attacker.cookie,
      json: { label: 'backdoor' },
    })
    expect(made.status).toBe(200)
    await s.ctx.store.push.insert({
      id: 'push_attacker',
      user_id: attacker.id,
      endpoint: 'https://push.example.net/attacker-device',
      p256dh: 'k',
      auth: 'a',
      name: null,
      user_agent: null,
      created_at: s.clock.now(),
    })
    const victim = await emailLogIn(sent, VICTIM)
    return { attacker, token: made.body.token as string, victim }
  }

  test("drops the maker's passkeys, sessions, person tokens and push devices", async () => {
    const { sent } = await start()
    const { attacker, token, victim } = await preHijack(sent)
    expect(victim.status).toBe(200)
    expect(victim.body.user.id).toBe(attacker.id)
    expect(await verified(VICTIM)).toBe(1)
    // The victim's new session works; nothing the attacker held does.
    expect((await me(victim.cookie as string)).status).toBe(200)
    expect((await me(attacker.cookie)).status).toBe(401)
    expect((await s.request('GET', '/v1/app/me', { token, origin: null })).status).toBe(401)
    expect((await s.logIn(attacker.authenticator)).status).toBe(401)
    expect(count(s.ctx, 'passkeys', 'user_id = ?1', attacker.id)).toBe(0)
    expect(count(s.ctx, 'sessions', 'user_id = ?1', attacker.id)).toBe(1)
    expect(count(s.ctx, 'push_subscriptions', 'user_id = ?1', attacker.id)).toBe(0)
    expect(
      count(
        s.ctx,
        'tokens',
        "user_id = ?1 AND kind = 'person' AND revoked_at IS NULL",
        attacker.id,
      ),
    ).toBe(0)
  })

  test('only the first: later email logins of the now verified account keep everything', async () => {
    const { sent } = await start()
    const { victim } = await preHijack(sent)
    const cookie = victim.cookie as string
    const own: SoftwareAuthenticator = s.authenticator()
    expect((await s.addPasskey(cookie, own)).status).toBe(200)
    const again = await emailLogIn(sent, VICTIM)
    expect(again.status).toBe(200)
    expect((await me(cookie)).status).toBe(200)
    expect((await s.logIn(own)).status).toBe(200)
  })

  test('a verified account loses nothing to an email-code login', async () => {
    const { sent, owner } = await start()
    const bound = await passkeySignUp(VICTIM, await s.invite(owner.user.id, VICTIM))
    expect((await emailLogIn(sent, VICTIM)).status).toBe(200)
    expect((await me(bound.cookie)).status).toBe(200)
    expect((await s.logIn(bound.authenticator)).status).toBe(200)
  })

  test('a passkey login proves nothing: the account stays unverified', async () => {
    await start()
    const made = await passkeySignUp(VICTIM)
    expect((await s.logIn(made.authenticator)).status).toBe(200)
    expect(await verified(VICTIM)).toBe(0)
  })
})
