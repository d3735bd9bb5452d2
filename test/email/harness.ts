import { rmSync } from 'node:fs'
import { silentLogger } from '../../src/core/log.ts'
import { createSmtpMailer } from '../../src/core/mailer.ts'
import { addUser } from '../../src/people/service.ts'
import { buildApp } from '../../src/server/app.ts'
import { type Config, DEFAULTS } from '../../src/server/config.ts'
import { type Ctx, closeContext, createContext } from '../../src/server/context.ts'
import { BASE, tempDir } from '../harness.ts'
import { type MailTrap, startMailTrap } from './mail-trap.ts'

export { BASE }
export const OWNER = 'owner@example.com'
export const FROM = 'hark@example.com'

export interface Answer {
  status: number
  body: Record<string, unknown>
  headers: Headers
}

export interface EmailServer {
  ctx: Ctx
  dir: string
  /** The SMTP listener the server's mailer sends to (absent with `mailer: false`). */
  trap: MailTrap
  /** The server's clock: `clock.t` is now; move it to age codes. */
  clock: { t: number; now(): number }
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Answer>
  get(path: string, headers?: Record<string, string>): Promise<Answer>
  /** Asks for a code and returns it as read from the mail. */
  mailedCode(email: string, purpose?: 'login' | 'signup', extra?: object): Promise<string>
  close(): Promise<void>
}

/**
 * A server on a real SQLite file whose mailer talks SMTP to a real listener in the test,
 * driven through `app.handle()`. By default it has an owner (`owner`: false for a fresh one).
 */
export async function startEmailServer(
  options: {
    owner?: boolean
    mailer?: boolean
    greetingDelayMs?: number
    trustProxy?: boolean
  } = {},
): Promise<EmailServer> {
  const dir = tempDir('hark-email-')
  const config: Config = {
    dataDir: dir,
    host: '127.0.0.1',
    port: 0,
    baseUrl: BASE,
    writeLimit: 0,
    maxFileSize: DEFAULTS.maxFileSize,
    // Client addresses from X-Forwarded-For, as behind a reverse proxy (else all are one).
    trustProxy: options.trustProxy ?? false,
  }
  const trap = await startMailTrap({ greetingDelayMs: options.greetingDelayMs })
  const mailer = options.mailer === false ? undefined : createSmtpMailer(trap.url, FROM)
  const clock = { t: Date.now(), now: () => clock.t }
  const ctx = createContext(config, { clock, mailer, log: silentLogger })
  if (options.owner !== false) addUser(ctx, { email: OWNER, owner: true })
  const app = buildApp(ctx)

  const call = async (method: string, path: string, body: unknown, headers = {}) => {
    const response = await app.handle(
      new Request(`${BASE}${path}`, {
        method,
        headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    const text = await response.text()
    return {
      status: response.status,
      body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
      headers: response.headers,
    }
  }

  const server: EmailServer = {
    ctx,
    dir,
    trap,
    clock,
    post: (path, body, headers) => call('POST', path, body, headers),
    get: (path, headers) => call('GET', path, undefined, headers),
    async mailedCode(email, purpose = 'login', extra = {}) {
      const started = await server.post('/v1/auth/email/start', { email, purpose, ...extra })
      if (started.status !== 200) {
        throw new Error(`start ${purpose} for ${email}: ${started.status} ${started.body.error}`)
      }
      return (await trap.next(email)).code
    },
    async close() {
      closeContext(ctx)
      await trap.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
  return server
}

/** The `name=value` part of a Set-Cookie header, to send back as a Cookie header. */
export const cookieOf = (headers: Headers) => (headers.get('set-cookie') ?? '').split(';')[0] ?? ''

/** A code of the same shape that is surely not `code`. */
export const otherCode = (code: string) => String((Number(code) + 1) % 1e8).padStart(8, '0')
