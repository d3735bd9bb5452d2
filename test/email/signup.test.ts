import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { hashToken, newId } from '../../src/core/ids.ts'
import { setRegistrationMode } from '../../src/people/settings.ts'
import { issueSetupToken, setupTokenFile } from '../../src/people/setup.ts'
import { cookieOf, type EmailServer, OWNER, otherCode, startEmailServer } from './harness.ts'

let s: EmailServer
afterEach(() => s.close())

const start = (body: object) => s.post('/v1/auth/email/start', { purpose: 'signup', ...body })
const verify = (email: string, code: string) =>
  s.post('/v1/auth/email/verify', { email, purpose: 'signup', code })

/** An invite as the owner would make one; returns its secret. */
async function invite(email: string | null = null): Promise<{ secret: string; id: string }> {
  const owner = (await s.ctx.store.users.byEmail(OWNER))!
  const secret = `invite-secret-${newId('inv')}`
  const now = s.ctx.clock.now()
  const row = await s.ctx.store.invites.insert({
    id: newId('inv'),
    hash: hashToken(secret),
    created_by: owner.id,
    email,
    created_at: now,
    expires_at: now + 3600_000,
  })
  return { secret, id: row.id }
}

describe('first-run setup by email', () => {
  test('the setup token and a mailed code create the owner', async () => {
    s = await startEmailServer({ owner: false })
    const token = (await issueSetupToken(s.ctx))!.split('#token=')[1]!
    const started = await start({ email: 'ada@example.com', name: ' Ada ', setup_token: token })
    expect(started.status).toBe(200)
    expect(started.body).toEqual({ ok: true, expires_in: 600 })
    const mail = await s.trap.next('ada@example.com')
    expect(mail.subject).toBe('Your code to finish setting up Hark')
    expect(mail.text).toContain('become its owner')

    const verified = await verify('ada@example.com', mail.code)
    expect(verified.status).toBe(200)
    expect(verified.body.user).toMatchObject({
      email: 'ada@example.com',
      name: 'Ada',
      is_owner: true,
    })
    expect((await s.get('/v1/info')).body.needs_setup).toBe(false)
    expect(existsSync(setupTokenFile(s.ctx))).toBe(false)
    const channels = await s.get('/v1/app/channels', { cookie: cookieOf(verified.headers) })
    expect(channels.status).toBe(200)
  })

  test('without the setup token, or with a wrong one, there is no code', async () => {
    s = await startEmailServer({ owner: false })
    await issueSetupToken(s.ctx)
    for (const body of [{}, { setup_token: 'guess' }]) {
      const refused = await start({ email: 'mallory@example.com', ...body })
      expect(refused.status).toBe(403)
      expect(refused.body.error).toContain('setup link')
    }
    // Nor can a login code be had for an account on a fresh server: there is none to mail.
    await s.post('/v1/auth/email/start', { email: 'mallory@example.com', purpose: 'login' })
    await Bun.sleep(100)
    expect(s.trap.mails).toHaveLength(0)
  })

  test('two setups racing: the first code redeemed wins, the other is 409', async () => {
    s = await startEmailServer({ owner: false })
    const token = (await issueSetupToken(s.ctx))!.split('#token=')[1]!
    const a = await s.mailedCode('a@example.com', 'signup', { setup_token: token })
    const b = await s.mailedCode('b@example.com', 'signup', { setup_token: token })
    expect((await verify('b@example.com', b)).status).toBe(200)
    const late = await verify('a@example.com', a)
    expect(late.status).toBe(409)
    expect(late.body.error).toBe('setup is already done')
    expect((await s.ctx.store.users.all()).filter((u) => u.is_owner)).toHaveLength(1)
  })

  test('the setup token is refused once there is an owner', async () => {
    s = await startEmailServer()
    const refused = await start({ email: 'late@example.com', setup_token: 'whatever' })
    expect(refused.status).toBe(409)
  })
})

describe('sign-up by email', () => {
  test('with an invite', async () => {
    s = await startEmailServer()
    const { secret, id } = await invite()
    const code = await s.mailedCode('bob@example.com', 'signup', { invite: secret, name: 'Bob' })
    const verified = await verify('bob@example.com', code)
    expect(verified.status).toBe(200)
    expect(verified.body.user).toMatchObject({
      email: 'bob@example.com',
      name: 'Bob',
      is_owner: false,
    })
    expect((await s.ctx.store.invites.byId(id))?.used_at).not.toBeNull()
    expect(verified.headers.get('set-cookie')).toContain('hark_session=')
  })

  test('the mail says it creates an account', async () => {
    s = await startEmailServer()
    await start({ email: 'bob@example.com', invite: (await invite()).secret })
    const mail = await s.trap.next('bob@example.com')
    expect(mail.subject).toBe('Your code to create a Hark account')
    expect(mail.text).toContain('to create your Hark account')
    expect(mail.text).toContain('expires in 10 minutes')
  })

  test('an invite for another address, or a made-up one, is 403', async () => {
    s = await startEmailServer()
    const forCarol = (await invite('carol@example.com')).secret
    expect((await start({ email: 'bob@example.com', invite: forCarol })).status).toBe(403)
    expect((await start({ email: 'bob@example.com', invite: 'made-up' })).status).toBe(403)
    expect(s.trap.mails).toHaveLength(0)
  })

  test('an invite used between start and verify: 403, and nothing is created', async () => {
    s = await startEmailServer()
    const { secret, id } = await invite()
    const code = await s.mailedCode('bob@example.com', 'signup', { invite: secret })
    await s.ctx.store.invites.use(id, s.ctx.clock.now(), 'usr_someone_else')
    const refused = await verify('bob@example.com', code)
    expect(refused.status).toBe(403)
    expect(await s.ctx.store.users.byEmail('bob@example.com')).toBeUndefined()
    // Admission refused the sign-up; the code itself was not spent on it.
    expect(await s.ctx.store.emailCodes.byAddress('bob@example.com', 'signup')).toHaveLength(1)
  })

  test('in open mode, without an invite', async () => {
    s = await startEmailServer()
    await setRegistrationMode(s.ctx, 'open')
    const code = await s.mailedCode('dora@example.com', 'signup')
    const verified = await verify('dora@example.com', code)
    expect(verified.status).toBe(200)
    expect(verified.body.user).toMatchObject({ email: 'dora@example.com', is_owner: false })
  })

  test('closed mode (the default) refuses with 403 and mails nothing', async () => {
    s = await startEmailServer()
    const refused = await start({ email: 'eve@example.com' })
    expect(refused.status).toBe(403)
    expect(refused.body.error).toBe('registration is closed; ask the owner for an invite')
    await setRegistrationMode(s.ctx, 'invite')
    expect((await start({ email: 'eve@example.com' })).status).toBe(403)
    await Bun.sleep(100)
    expect(s.trap.mails).toHaveLength(0)
  })

  test('an address that has an account is told to log in (409)', async () => {
    s = await startEmailServer()
    await setRegistrationMode(s.ctx, 'open')
    const taken = await start({ email: OWNER })
    expect(taken.status).toBe(409)
    expect(taken.body.error).toContain('log in')
  })

  test('a wrong sign-up code creates nothing', async () => {
    s = await startEmailServer()
    await setRegistrationMode(s.ctx, 'open')
    const code = await s.mailedCode('dora@example.com', 'signup')
    const wrong = await verify('dora@example.com', otherCode(code))
    expect(wrong.status).toBe(400)
    expect(wrong.body.field).toBe('code')
    expect(await s.ctx.store.users.byEmail('dora@example.com')).toBeUndefined()
  })

  test('an SMTP failure on sign-up is a clear 503, and leaves no code behind', async () => {
    s = await startEmailServer()
    await setRegistrationMode(s.ctx, 'open')
    s.ctx.mailer = { send: () => Promise.reject(new Error('535 authentication failed')) }
    const failed = await start({ email: 'dora@example.com' })
    expect(failed.status).toBe(503)
    expect(failed.body.error).toContain('SMTP settings')
    expect(await s.ctx.store.emailCodes.byAddress('dora@example.com', 'signup')).toEqual([])
  })
})
