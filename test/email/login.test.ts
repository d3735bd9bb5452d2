import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { CODE_TTL_MS } from '../../src/people/enrol/email/codes.ts'
import { addUser } from '../../src/people/service.ts'
import {
  BASE,
  cookieOf,
  type EmailServer,
  FROM,
  OWNER,
  otherCode,
  startEmailServer,
} from './harness.ts'

let s: EmailServer
beforeEach(async () => {
  s = await startEmailServer()
})
afterEach(() => s.close())

const start = (email: string, purpose = 'login') =>
  s.post('/v1/auth/email/start', { email, purpose })
const verify = (email: string, code: string, purpose = 'login') =>
  s.post('/v1/auth/email/verify', { email, purpose, code })

describe('email login', () => {
  test('the mailed code logs in: a session cookie that opens the app', async () => {
    const started = await start(OWNER)
    expect(started.status).toBe(200)
    expect(started.body).toEqual({ ok: true, expires_in: 600 })
    const mail = await s.trap.next(OWNER)
    expect(mail.from).toBe(FROM)
    expect(mail.code).toMatch(/^\d{8}$/)

    const verified = await verify(OWNER, mail.code)
    expect(verified.status).toBe(200)
    expect(verified.body.user).toMatchObject({ email: OWNER, is_owner: true, name: null })
    expect(verified.headers.get('set-cookie')).toMatch(/^hark_session=\w+; Path=\/; HttpOnly/)
    expect(verified.headers.get('cache-control')).toBe('no-store')

    const channels = await s.get('/v1/app/channels', { cookie: cookieOf(verified.headers) })
    expect(channels.status).toBe(200)
    expect(channels.body.channels).toEqual([])
  })

  test('the mail says what the code is for, that it expires in 10 minutes, and links the base URL', async () => {
    // A forged Host header must not end up in the mail: only the configured base URL does.
    await s.post(
      '/v1/auth/email/start',
      { email: OWNER, purpose: 'login' },
      { host: 'evil.example' },
    )
    const mail = await s.trap.next(OWNER)
    expect(mail.subject).toBe('Your Hark login code')
    expect(mail.subject).not.toContain(mail.code)
    expect(mail.text).toContain('to log in to Hark')
    expect(mail.text).toContain('expires in 10 minutes')
    expect(mail.text).toContain(BASE)
    expect(mail.raw).not.toContain('evil.example')
  })

  test('the address matches whatever its case, and spaces or dashes in the code are fine', async () => {
    const code = await s.mailedCode('OWNER@Example.com')
    const typed = `${code.slice(0, 4)} ${code.slice(4)}`
    const verified = await verify('owner@EXAMPLE.com', typed)
    expect(verified.status).toBe(200)
    expect(verified.body.user).toMatchObject({ email: OWNER })
  })

  test('a wrong code is 400 naming code, and counts down the tries', async () => {
    const code = await s.mailedCode(OWNER)
    const wrong = await verify(OWNER, otherCode(code))
    expect(wrong.status).toBe(400)
    expect(wrong.body).toEqual({ error: 'code: is wrong (4 tries left)', field: 'code' })
    expect(wrong.headers.get('set-cookie')).toBeNull()
    expect((await verify(OWNER, code)).status).toBe(200)
  })

  test('five wrong tries kill the code: even the right one fails after', async () => {
    const code = await s.mailedCode(OWNER)
    const errors: unknown[] = []
    for (let i = 0; i < 5; i++) errors.push((await verify(OWNER, otherCode(code))).body.error)
    expect(errors).toEqual([
      'code: is wrong (4 tries left)',
      'code: is wrong (3 tries left)',
      'code: is wrong (2 tries left)',
      'code: is wrong (1 try left)',
      'code: is wrong, and that was the last try; ask for a new one',
    ])
    const right = await verify(OWNER, code)
    expect(right.status).toBe(400)
    expect(right.body).toEqual({
      error: 'code: was tried wrong too many times; ask for a new one',
      field: 'code',
    })
    // A new code starts over.
    expect((await verify(OWNER, await s.mailedCode(OWNER))).status).toBe(200)
  })

  test('a code expires after 10 minutes', async () => {
    const first = await s.mailedCode(OWNER)
    s.clock.advance(CODE_TTL_MS - 1)
    expect((await verify(OWNER, first)).status).toBe(200)

    const second = await s.mailedCode(OWNER)
    s.clock.advance(CODE_TTL_MS)
    const late = await verify(OWNER, second)
    expect(late.status).toBe(400)
    expect(late.body).toEqual({ error: 'code: has expired; ask for a new one', field: 'code' })
  })

  test('a code works once', async () => {
    const code = await s.mailedCode(OWNER)
    const first = await verify(OWNER, code)
    expect(first.status).toBe(200)
    const again = await verify(OWNER, code)
    expect(again.status).toBe(400)
    expect(again.body.field).toBe('code')
    expect(again.headers.get('set-cookie')).toBeNull()
  })

  test('a code works once, also against parallel requests', async () => {
    const code = await s.mailedCode(OWNER)
    const answers = await Promise.all([1, 2, 3, 4].map(() => verify(OWNER, code)))
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400, 400, 400])
  })

  test('asking again keeps the earlier code good; the one used consumes both', async () => {
    const old = await s.mailedCode(OWNER)
    const fresh = await s.mailedCode(OWNER)
    expect((await verify(OWNER, old)).status).toBe(200)
    const spent = await verify(OWNER, fresh)
    expect(spent.status).toBe(400)
    expect(spent.body).toEqual({
      error: 'code: no code is waiting for this address; ask for a new one',
      field: 'code',
    })
  })

  test('each code lives its own 10 minutes', async () => {
    const first = await s.mailedCode(OWNER)
    s.clock.advance(CODE_TTL_MS / 2)
    const second = await s.mailedCode(OWNER)
    s.clock.advance(CODE_TTL_MS / 2)
    const late = await verify(OWNER, first)
    expect(late.body).toEqual({ error: 'code: has expired; ask for a new one', field: 'code' })
    expect((await verify(OWNER, second)).status).toBe(200)
  })

  test('a login code cannot finish a sign-up', async () => {
    const code = await s.mailedCode(OWNER)
    const crossed = await verify(OWNER, code, 'signup')
    expect(crossed.status).toBe(400)
    expect(crossed.body.field).toBe('code')
    expect((await verify(OWNER, code)).status).toBe(200)
  })

  test('each login is a new session', async () => {
    const a = await verify(OWNER, await s.mailedCode(OWNER))
    const b = await verify(OWNER, await s.mailedCode(OWNER))
    expect(cookieOf(a.headers)).not.toBe(cookieOf(b.headers))
    expect(
      await s.ctx.store.sessions.byUser((await s.ctx.store.users.byEmail(OWNER))!.id),
    ).toHaveLength(2)
  })

  test('a person added by the operator logs in the same way', async () => {
    await addUser(s.ctx, { email: 'bob@example.com', name: 'Bob' })
    const verified = await verify('bob@example.com', await s.mailedCode('bob@example.com'))
    expect(verified.body.user).toMatchObject({
      email: 'bob@example.com',
      name: 'Bob',
      is_owner: false,
    })
  })
})

describe('no enumeration', () => {
  test('an address without an account gets the same answer and no mail', async () => {
    const unknown = await start('nobody@example.com')
    const known = await start(OWNER)
    expect(unknown.status).toBe(known.status)
    expect(unknown.body).toEqual(known.body)
    expect([...unknown.headers]).toEqual([...known.headers])
    await s.trap.next(OWNER)
    await Bun.sleep(100)
    expect(s.trap.to('nobody@example.com')).toHaveLength(0)
  })

  test('trying codes for it answers like for a real account', async () => {
    await start('nobody@example.com')
    await start(OWNER)
    const code = (await s.trap.next(OWNER)).code
    for (let i = 0; i < 6; i++) {
      const unknown = await verify('nobody@example.com', otherCode(code))
      const known = await verify(OWNER, otherCode(code))
      expect(unknown.status).toBe(known.status)
      expect(unknown.body).toEqual(known.body)
    }
  })
})
