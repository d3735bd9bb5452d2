import { afterEach, expect, test } from 'bun:test'
import { type EmailServer, OWNER, startEmailServer } from './harness.ts'

let s: EmailServer
afterEach(() => s.close())

// Long enough that an answer on a loaded machine (a GC pause, another file's browser) stays
// far under it: the bound below is a quarter of it.
const SLOW_MS = 3000

/**
 * Whether a mail goes out must not show in the response time. Rather than compare timings
 * (noisy), this shows the mechanism: with an SMTP server that takes seconds to greet, both
 * answers still come back well under that, because no request waits for a send.
 */
test('login answers do not wait for the mail, for known and unknown addresses alike', async () => {
  s = await startEmailServer({ greetingDelayMs: SLOW_MS })
  const timed = async (email: string) => {
    const t0 = performance.now()
    const answer = await s.post('/v1/auth/email/start', { email, purpose: 'login' })
    return { answer, ms: performance.now() - t0 }
  }
  const sentAt = performance.now()
  const known = await timed(OWNER)
  const unknown = await timed('nobody@example.com')
  expect(known.answer.status).toBe(200)
  expect(unknown.answer.body).toEqual(known.answer.body)
  expect(known.ms).toBeLessThan(SLOW_MS / 4)
  expect(unknown.ms).toBeLessThan(SLOW_MS / 4)

  // The mail does go out, once the slow server gets to it.
  const mail = await s.trap.next(OWNER, 10_000)
  expect(performance.now() - sentAt).toBeGreaterThanOrEqual(SLOW_MS - 50)
  expect(s.trap.to('nobody@example.com')).toHaveLength(0)
  const verified = await s.post('/v1/auth/email/verify', {
    email: OWNER,
    purpose: 'login',
    code: mail.code,
  })
  expect(verified.status).toBe(200)
})

test('a failing SMTP server does not fail the login answer (it is logged)', async () => {
  s = await startEmailServer()
  const errors: string[] = []
  s.ctx.log = { ...s.ctx.log, error: (m) => errors.push(m) }
  s.ctx.mailer = { send: () => Promise.reject(new Error('421 try later')) }
  const answer = await s.post('/v1/auth/email/start', { email: OWNER, purpose: 'login' })
  expect(answer.status).toBe(200)
  // The send runs after the answer, on a timer: waited for, not for a guessed time.
  for (let i = 0; i < 200 && errors.length === 0; i++) await Bun.sleep(10)
  expect(errors).toEqual([`email login code to ${OWNER} not sent: 421 try later`])
})
