import { afterEach, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { EMAIL_LIMITS } from '../../src/access/email-limits.ts'
import { hashToken, newId } from '../../src/core/ids.ts'
import { issueSetupToken } from '../../src/people/setup.ts'
import { BASE, type EmailServer, OWNER, startEmailServer } from './harness.ts'

let s: EmailServer
afterEach(() => s.close())

const START = '/v1/auth/email/start'
const VERIFY = '/v1/auth/email/verify'

describe('rate limits', () => {
  test(`${EMAIL_LIMITS.startsPerAddressFromIp} codes per address per 15 minutes, then 429 with Retry-After`, async () => {
    s = await startEmailServer()
    for (let i = 0; i < EMAIL_LIMITS.startsPerAddressFromIp; i++) {
      expect((await s.post(START, { email: OWNER, purpose: 'login' })).status).toBe(200)
    }
    // Another spelling of the same address is the same address.
    const limited = await s.post(START, { email: 'Owner@Example.COM', purpose: 'login' })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toContain('too many codes asked for this email address')
    const wait = Number(limited.headers.get('retry-after'))
    expect(wait).toBe(180) // one code every 15 min / 5
    // Other addresses are not held up by it.
    expect((await s.post(START, { email: 'x@example.com', purpose: 'login' })).status).toBe(200)

    s.clock.advance((wait - 1) * 1000)
    expect((await s.post(START, { email: OWNER, purpose: 'login' })).status).toBe(429)
    s.clock.advance(1000)
    expect((await s.post(START, { email: OWNER, purpose: 'login' })).status).toBe(200)
  })

  test('the per-address limit is the same for an address without an account', async () => {
    s = await startEmailServer()
    const statuses: number[] = []
    for (let i = 0; i <= EMAIL_LIMITS.startsPerAddressFromIp; i++) {
      statuses.push((await s.post(START, { email: 'nobody@example.com', purpose: 'login' })).status)
    }
    expect(statuses.at(-1)).toBe(429)
    expect(statuses.slice(0, -1).every((x) => x === 200)).toBe(true)
  })

  test(`${EMAIL_LIMITS.startsPerIp} codes per IP per 15 minutes, then 429 with Retry-After`, async () => {
    s = await startEmailServer()
    for (let i = 0; i < EMAIL_LIMITS.startsPerIp; i++) {
      const answer = await s.post(START, { email: `p${i}@example.com`, purpose: 'login' })
      expect(answer.status).toBe(200)
    }
    const limited = await s.post(START, { email: 'fresh@example.com', purpose: 'login' })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toContain('from your network address')
    expect(Number(limited.headers.get('retry-after'))).toBe(45)
    // Counted before the body is read: a malformed request from a limited address is 429 too.
    expect((await s.post(START, { nonsense: true })).status).toBe(429)
  })

  test(`${EMAIL_LIMITS.verifiesPerIp} code tries per IP per 15 minutes, across addresses`, async () => {
    s = await startEmailServer()
    for (let i = 0; i < EMAIL_LIMITS.verifiesPerIp; i++) {
      const answer = await s.post(VERIFY, {
        email: `p${i}@example.com`,
        purpose: 'login',
        code: '12345678',
      })
      expect(answer.status).toBe(400)
    }
    const code = await s.mailedCode(OWNER)
    const limited = await s.post(VERIFY, { email: OWNER, purpose: 'login', code })
    expect(limited.status).toBe(429)
    expect(limited.body.error).toContain('too many codes tried')
    expect(Number(limited.headers.get('retry-after'))).toBe(30)
    s.clock.advance(30_000)
    expect((await s.post(VERIFY, { email: OWNER, purpose: 'login', code })).status).toBe(200)
  })
})

describe('guards', () => {
  test('no mailer configured: 503 with a clear error, on both routes', async () => {
    s = await startEmailServer({ mailer: false })
    const start = await s.post(START, { email: OWNER, purpose: 'login' })
    expect(start.status).toBe(503)
    expect(start.body.error).toBe(
      'email login is not available: this server has no SMTP server configured (--smtp-url)',
    )
    const verify = await s.post(VERIFY, { email: OWNER, purpose: 'login', code: '12345678' })
    expect(verify.status).toBe(503)
    expect((await s.get('/v1/info')).body.features).toMatchObject({ email: false })
  })

  test('a foreign Origin is 403 whatever the body; our own or none is fine', async () => {
    s = await startEmailServer()
    for (const origin of ['https://evil.example', 'null', 'http://hark.test:8080']) {
      for (const [path, body] of [
        [START, { email: OWNER, purpose: 'login' }],
        [VERIFY, { email: OWNER, purpose: 'login', code: '12345678' }],
        [START, { bad: 1 }],
      ] as const) {
        const refused = await s.post(path, body, { origin })
        expect(refused.status).toBe(403)
        expect(refused.body.error).toContain('cross-origin')
      }
    }
    await Bun.sleep(100)
    expect(s.trap.mails).toHaveLength(0)
    expect((await s.post(START, { email: OWNER, purpose: 'login' }, { origin: BASE })).status).toBe(
      200,
    )
    const code = (await s.trap.next(OWNER)).code
    const verified = await s.post(
      VERIFY,
      { email: OWNER, purpose: 'login', code },
      { origin: BASE },
    )
    expect(verified.status).toBe(200)
  })

  test('bad input is 400 naming the field', async () => {
    s = await startEmailServer()
    const cases: [string, unknown, string][] = [
      [START, { purpose: 'login' }, 'email'],
      [START, { email: 'not-an-address', purpose: 'login' }, 'email'],
      [START, { email: 42, purpose: 'login' }, 'email'],
      [START, { email: OWNER }, 'purpose'],
      [START, { email: OWNER, purpose: 'admin' }, 'purpose'],
      [START, { email: OWNER, purpose: 'signup', name: 'x'.repeat(101) }, 'name'],
      [VERIFY, { email: OWNER, purpose: 'login' }, 'code'],
      [VERIFY, { email: OWNER, purpose: 'login', code: 12345678 }, 'code'],
      [VERIFY, { email: OWNER, purpose: 'login', code: '1234567' }, 'code'],
      [VERIFY, { email: OWNER, purpose: 'login', code: 'abcdefgh' }, 'code'],
      [VERIFY, { email: OWNER, purpose: 'nope', code: '12345678' }, 'purpose'],
    ]
    for (const [path, body, field] of cases) {
      const answer = await s.post(path, body)
      expect({ body, status: answer.status, field: answer.body.field }).toEqual({
        body,
        status: 400,
        field,
      })
    }
    expect((await s.post(START, { email: OWNER, purpose: 'admin' })).body.error).toBe(
      'purpose: must be one of login, signup',
    )
  })

  test('malformed JSON is 400', async () => {
    s = await startEmailServer()
    const response = await s.post(START, undefined, { 'content-type': 'application/json' })
    expect(response.status).toBe(400)
  })
})

describe('secrecy', () => {
  test('neither codes nor the secrets a sign-up carries are stored in plaintext', async () => {
    s = await startEmailServer({ owner: false })
    const setupToken = (await issueSetupToken(s.ctx))!.split('#token=')[1]!
    const setupCode = await s.mailedCode('ada@example.com', 'signup', { setup_token: setupToken })
    await s.post(START, { email: 'nobody@example.com', purpose: 'login' })
    // An owner appears (as `hark admin user add --owner` would do it) while the setup code waits.
    const user = await s.ctx.store.users.insert({
      id: newId('usr'),
      email: 'boss@example.com',
      name: null,
      is_owner: true,
      created_at: s.clock.now(),
      email_verified: true,
    })
    const inviteSecret = `inv-${newId('inv')}`
    await s.ctx.store.invites.insert({
      id: newId('inv'),
      hash: hashToken(inviteSecret),
      created_by: user.id,
      email: null,
      created_at: s.clock.now(),
      expires_at: s.clock.now() + 3600_000,
    })
    const inviteCode = await s.mailedCode('bob@example.com', 'signup', { invite: inviteSecret })
    const userCode = await s.mailedCode('boss@example.com')

    const files = readdirSync(s.dir).filter((f) => f.startsWith('hark.db'))
    expect(files).toContain('hark.db')
    const bytes = files.map((f) => readFileSync(join(s.dir, f)).toString('latin1')).join('\n')
    expect(bytes).toContain('boss@example.com') // the search does see the tables
    for (const secret of [setupCode, inviteCode, userCode, inviteSecret, setupToken]) {
      expect(bytes.includes(secret)).toBe(false)
    }
    for (const [email, purpose] of [
      ['ada@example.com', 'signup'],
      ['nobody@example.com', 'login'],
      ['bob@example.com', 'signup'],
      ['boss@example.com', 'login'],
    ] as const) {
      const [row] = await s.ctx.store.emailCodes.byAddress(email, purpose)
      if (!row) throw new Error(`no code for ${email}`)
      expect(row.code_hash).toHaveLength(32)
      expect(row.data).not.toContain('{') // sealed, not JSON
    }
  })
})
