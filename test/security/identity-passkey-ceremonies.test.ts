import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { CHALLENGE_TTL_MS, PASSKEY_LIMITS } from '../../src/access/passkeys/ceremony.ts'
import { newId } from '../../src/core/ids.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/**
 * Attack pass, finding 5: anyone could start passkey ceremonies without end, each one a
 * challenge row committed to disk. Now a client address starts at most 30 per five minutes,
 * expired challenges are swept, and the server holds at most 1000 waiting anonymous ones.
 */

let s: FreshServer
beforeEach(async () => {
  s = await startFreshServer()
  // Client addresses from X-Forwarded-For, as behind a reverse proxy: one per "attacker".
  s.ctx.config.trustProxy = true
})
afterEach(() => s.close())

const LOGIN = '/v1/auth/passkey/login/options'
const REGISTER = '/v1/auth/passkey/register/options'
const from = (ip: string) => ({ 'x-forwarded-for': ip })
const challenges = () =>
  (s.ctx.db.query('SELECT count(*) AS n FROM challenges').get() as { n: number }).n

describe('starting passkey ceremonies', () => {
  test('300 anonymous login starts from one address store 30 challenges; the rest are 429', async () => {
    const statuses: number[] = []
    for (let i = 0; i < 300; i++) {
      statuses.push((await s.request('POST', LOGIN, { headers: from('203.0.113.5') })).status)
    }
    expect(statuses.slice(0, PASSKEY_LIMITS.startsPerIp).every((x) => x === 200)).toBe(true)
    expect(statuses.slice(PASSKEY_LIMITS.startsPerIp).every((x) => x === 429)).toBe(true)
    expect(challenges()).toBe(PASSKEY_LIMITS.startsPerIp)

    const refused = await s.request('POST', LOGIN, { headers: from('203.0.113.5') })
    expect(refused.status).toBe(429)
    expect(refused.body).toEqual({
      error: 'too many passkey logins or sign-ups started from your network address; retry in 10 s',
    })
    // Sign-up starts count against the same limit, and are refused before the body is read.
    const signUp = await s.request('POST', REGISTER, {
      headers: from('203.0.113.5'),
      json: { nonsense: true },
    })
    expect(signUp.status).toBe(429)
    expect(challenges()).toBe(PASSKEY_LIMITS.startsPerIp)

    // Another address is not held up; the limited one gets one more every 10 seconds.
    expect((await s.request('POST', LOGIN, { headers: from('198.51.100.7') })).status).toBe(200)
    s.clock.advance(10_000)
    expect((await s.request('POST', LOGIN, { headers: from('203.0.113.5') })).status).toBe(200)
    expect((await s.request('POST', LOGIN, { headers: from('203.0.113.5') })).status).toBe(429)
  })

  test('the 429 says when to retry', async () => {
    for (let i = 0; i < PASSKEY_LIMITS.startsPerIp; i++) await s.request('POST', LOGIN)
    const response = await s.request('POST', LOGIN, { origin: null })
    expect(response.status).toBe(429)
    expect(response.headers.get('retry-after')).toBe('10')
    expect(response.headers.get('content-type')).toContain('application/json')
  })

  test('expired challenges are swept by the next start', async () => {
    for (let i = 0; i < 5; i++) await s.request('POST', LOGIN)
    expect(challenges()).toBe(5)
    s.clock.advance(CHALLENGE_TTL_MS)
    expect((await s.request('POST', LOGIN)).status).toBe(200)
    expect(challenges()).toBe(1)
  })

  test('past 1000 waiting anonymous challenges, a start is 503 with Retry-After and stores nothing', async () => {
    // The attack from many addresses, each under its own limit: 34 addresses × 30 fill the cap.
    // Most of it is written straight to the table (the same rows, only faster), the rest asked.
    const asked = 60
    const now = s.clock.now()
    await s.ctx.writes.run(async (tx) => {
      for (let i = 0; i < PASSKEY_LIMITS.pendingAnonymous - asked; i++) {
        await tx.store.challenges.insert({
          id: newId('chal'),
          purpose: i % 2 ? 'login' : 'register',
          challenge: 'x',
          data: null,
          expires_at: now + CHALLENGE_TTL_MS,
        })
      }
    })
    s.clock.advance(60_000)
    for (let i = 0; i < asked; i++) {
      const ip = `192.0.2.${Math.floor(i / PASSKEY_LIMITS.startsPerIp)}`
      expect((await s.request('POST', LOGIN, { headers: from(ip) })).status).toBe(200)
    }
    expect(challenges()).toBe(PASSKEY_LIMITS.pendingAnonymous)

    const full = await s.request('POST', LOGIN, { headers: from('198.51.100.1') })
    expect(full.status).toBe(503)
    expect(full.body).toEqual({
      error:
        'too many passkey logins and sign-ups are waiting to finish on this server; retry in 240 s',
    })
    const token = await s.setupToken()
    const signUp = await s.request('POST', REGISTER, {
      headers: from('198.51.100.2'),
      json: { email: 'ada@example.com', setup_token: token },
    })
    expect(signUp.status).toBe(503)
    expect(challenges()).toBe(PASSKEY_LIMITS.pendingAnonymous)

    const response = await s.request('POST', LOGIN, { headers: from('198.51.100.3'), origin: null })
    expect(response.headers.get('retry-after')).toBe('240')

    // Once the first ones expire, they are swept and starts work again.
    s.clock.advance(240_000)
    expect((await s.request('POST', LOGIN, { headers: from('198.51.100.1') })).status).toBe(200)
    expect(challenges()).toBe(asked + 1)
  })

  test('adding a passkey, for a logged-in person, is not held up by the anonymous cap', async () => {
    const owner = await s.setUpOwner()
    const now = s.clock.now()
    await s.ctx.writes.run(async (tx) => {
      for (let i = 0; i < PASSKEY_LIMITS.pendingAnonymous; i++) {
        await tx.store.challenges.insert({
          id: newId('chal'),
          purpose: 'login',
          challenge: 'x',
          data: null,
          expires_at: now + CHALLENGE_TTL_MS,
        })
      }
    })
    expect((await s.request('POST', LOGIN)).status).toBe(503)
    expect((await s.addPasskey(owner.cookie, s.authenticator(), 'Second')).status).toBe(200)
  })
})
