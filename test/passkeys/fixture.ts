import { rmSync } from 'node:fs'
import { hashToken, newId } from '../../src/core/ids.ts'
import { silentLogger } from '../../src/core/log.ts'
import type { Mailer } from '../../src/core/mailer.ts'
import { issueSetupToken } from '../../src/people/setup.ts'
import { buildApp } from '../../src/server/app.ts'
import { type Config, DEFAULTS } from '../../src/server/config.ts'
import { type Ctx, closeContext, createContext } from '../../src/server/context.ts'
import { BASE, tempDir } from '../harness.ts'
import { SoftwareAuthenticator, type Tamper } from './authenticator.ts'

/** The server's configured base URL: rpID `hark.example.com`, origin below. */
export const ORIGIN = 'https://hark.example.com'
export const RP_ID = 'hark.example.com'

/** A settable clock, so expiry is tested without waiting. */
export class TestClock {
  constructor(public ms = Date.now()) {}
  now = () => this.ms
  advance(ms: number) {
    this.ms += ms
  }
}

export interface Reply {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the JSON holds
  body: any
  setCookie: string | null
  /** `name=value` of the session cookie set by this reply, for the next request. */
  cookie?: string
}

export interface CallOptions {
  json?: unknown
  cookie?: string
  token?: string
  /** The Origin header; `null` leaves it out. Defaults to the server's origin, as a browser. */
  origin?: string | null
  headers?: Record<string, string>
}

/**
 * A fresh server with no people at all (unlike `startTestServer`, which provisions an owner),
 * on the realistic base URL above. Requests go to `app.handle()`; the request URLs use the
 * harness's BASE, which the server never consults for the relying party.
 */
export function startFreshServer(options: { mailer?: Mailer } = {}) {
  const dir = tempDir('hark-passkeys-')
  const config: Config = {
    dataDir: dir,
    host: '127.0.0.1',
    port: 0,
    baseUrl: ORIGIN,
    writeLimit: 0,
    maxFileSize: DEFAULTS.maxFileSize,
  }
  const clock = new TestClock()
  const ctx: Ctx = createContext(config, { clock, log: silentLogger, mailer: options.mailer })
  const app = buildApp(ctx)

  async function call(method: string, path: string, o: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...o.headers }
    const origin = o.origin === undefined ? ORIGIN : o.origin
    if (origin !== null) headers.origin = origin
    if (o.cookie) headers.cookie = o.cookie
    if (o.token) headers.authorization = `Bearer ${o.token}`
    let body: string | undefined
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(o.json)
    }
    const response = await app.handle(new Request(BASE + path, { method, headers, body }))
    const text = await response.text()
    const setCookie = response.headers.get('set-cookie')
    return {
      status: response.status,
      body: text ? JSON.parse(text) : undefined,
      setCookie,
      cookie: setCookie?.split(';')[0],
    }
  }

  /** Runs a whole sign-up ceremony with `authenticator`; `tamper` spoils the response. */
  async function signUp(
    authenticator: SoftwareAuthenticator,
    req: { email: string; name?: string; setup_token?: string; invite?: string },
    tamper?: Tamper,
  ): Promise<Reply> {
    const options = await call('POST', '/v1/auth/passkey/register/options', { json: req })
    if (options.status !== 200) return options
    const response = await authenticator.register(options.body.options, tamper)
    return call('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
  }

  async function logIn(authenticator: SoftwareAuthenticator, tamper?: Tamper): Promise<Reply> {
    const options = await call('POST', '/v1/auth/passkey/login/options', { json: {} })
    const response = await authenticator.login(options.body.options, tamper)
    return call('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
  }

  /** Adds a passkey to the person logged in with `cookie`. */
  async function addPasskey(
    cookie: string,
    authenticator: SoftwareAuthenticator,
    name?: string,
  ): Promise<Reply> {
    const options = await call('POST', '/v1/app/passkeys/options', { cookie })
    if (options.status !== 200) return options
    const response = await authenticator.register(options.body.options)
    return call('POST', '/v1/app/passkeys/verify', {
      cookie,
      json: { challenge_id: options.body.challenge_id, response, name },
    })
  }

  /** The token in the setup link (`.../setup#token=XXX`). */
  function setupToken(): string {
    const link = issueSetupToken(ctx) as string
    return new URL(link).hash.slice('#token='.length)
  }

  /** The owner, created through first-run setup with a passkey; returns their session cookie. */
  async function setUpOwner(email = 'owner@example.com') {
    const authenticator = new SoftwareAuthenticator(ORIGIN)
    const reply = await signUp(authenticator, { email, setup_token: setupToken() })
    if (reply.status !== 200) throw new Error(`setup failed: ${JSON.stringify(reply.body)}`)
    return { authenticator, cookie: reply.cookie as string, user: reply.body.user }
  }

  /** An invite row as the owner's "invite someone" would create it; returns its secret. */
  function invite(createdBy: string, email: string | null = null, ttlMs = 3600_000): string {
    const secret = `inv-secret-${newId('inv')}`
    ctx.store.invites.insert({
      id: newId('inv'),
      hash: hashToken(secret),
      created_by: createdBy,
      email,
      created_at: clock.now(),
      expires_at: clock.now() + ttlMs,
    })
    return secret
  }

  return {
    ctx,
    app,
    dir,
    clock,
    call,
    signUp,
    logIn,
    addPasskey,
    setupToken,
    setUpOwner,
    invite,
    authenticator: () => new SoftwareAuthenticator(ORIGIN),
    close() {
      closeContext(ctx)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export type FreshServer = ReturnType<typeof startFreshServer>
