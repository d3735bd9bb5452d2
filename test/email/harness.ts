import {
  BASE,
  MAIL_FROM,
  OWNER,
  startTestServer,
  TestClock,
  type TestServer,
  type TestServerOptions,
} from '../harness.ts'
import { type MailTrap, startMailTrap } from './mail-trap.ts'

export { BASE, OWNER }
export const FROM = MAIL_FROM

export interface Answer {
  status: number
  body: Record<string, unknown>
  headers: Headers
}

export interface EmailServer extends TestServer {
  /** The SMTP listener the server's mailer sends to (not used with `mailer: false`). */
  trap: MailTrap
  /** The server's clock: advance it to age codes. */
  clock: TestClock
  /** A request as a script sends it: no Origin unless given in `headers`. */
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>
  get(path: string, headers?: Record<string, string>): Promise<Answer>
  /** Asks for a code and returns it as read from the mail. */
  mailedCode(email: string, purpose?: 'login' | 'signup', extra?: object): Promise<string>
}

/**
 * The test server whose mailer talks SMTP to a real listener in the test. By default it has an
 * owner without a channel, as after signing up (`owner`: false for a fresh one).
 */
export async function startEmailServer(
  options: Pick<TestServerOptions, 'owner' | 'trustProxy'> & {
    mailer?: boolean
    greetingDelayMs?: number
  } = {},
): Promise<EmailServer> {
  const { mailer, greetingDelayMs, ...rest } = options
  const trap = await startMailTrap({ greetingDelayMs })
  const clock = new TestClock()
  const s = await startTestServer({
    ...rest,
    channel: false,
    clock,
    mailer: mailer === false ? undefined : trap,
  })
  const call = async (method: string, path: string, json: unknown, headers = {}) => {
    const reply = await s.request(method, path, { json, headers, origin: null })
    return { status: reply.status, body: reply.body ?? {}, headers: reply.headers }
  }
  const close = s.close
  return Object.assign(s, {
    trap,
    clock,
    post: (path: string, body: unknown, headers?: Record<string, string>) =>
      call('POST', path, body, headers),
    get: (path: string, headers?: Record<string, string>) => call('GET', path, undefined, headers),
    async mailedCode(email: string, purpose: 'login' | 'signup' = 'login', extra = {}) {
      const started = await call('POST', '/v1/auth/email/start', { email, purpose, ...extra })
      if (started.status !== 200) {
        throw new Error(`start ${purpose} for ${email}: ${started.status} ${started.body.error}`)
      }
      return (await trap.next(email)).code
    },
    async close() {
      await close()
      await trap.close()
    },
  })
}

/** The `name=value` part of a Set-Cookie header, to send back as a Cookie header. */
export const cookieOf = (headers: Headers) => (headers.get('set-cookie') ?? '').split(';')[0] ?? ''

/** A code of the same shape that is surely not `code`. */
export const otherCode = (code: string) => String((Number(code) + 1) % 1e8).padStart(8, '0')
