import { hashToken, newId } from '../../src/core/ids.ts'
import type { Mailer } from '../../src/core/mailer.ts'
import { issueSetupToken } from '../../src/people/setup.ts'
import { type Reply, startTestServer, TestClock } from '../harness.ts'
import { SoftwareAuthenticator, type Tamper } from './authenticator.ts'

/** The server's configured base URL: rpID `hark.example.com`, origin below. */
export const ORIGIN = 'https://hark.example.com'
export const RP_ID = 'hark.example.com'

/**
 * The test server with no people at all, on the realistic base URL above, with the passkey
 * ceremonies run by a software authenticator. Requests go to the handler in-process, with the
 * app's Origin unless told otherwise.
 */
export async function startFreshServer(options: { mailer?: Mailer; listen?: boolean } = {}) {
  const clock = new TestClock()
  // Listening, the server is its own loopback origin (the CLI reaches it there); the relying
  // party is then 127.0.0.1 and the software passkeys report that origin.
  const s = options.listen
    ? await startTestServer({ owner: false, listen: true, clock, mailer: options.mailer })
    : await startTestServer({ owner: false, baseUrl: ORIGIN, clock, mailer: options.mailer })
  const origin = options.listen ? s.url : ORIGIN

  /** Runs a whole sign-up ceremony with `authenticator`; `tamper` spoils the response. */
  async function signUp(
    authenticator: SoftwareAuthenticator,
    req: { email: string; name?: string; setup_token?: string; invite?: string },
    tamper?: Tamper,
  ): Promise<Reply> {
    const options = await s.request('POST', '/v1/auth/passkey/register/options', { json: req })
    if (options.status !== 200) return options
    const response = await authenticator.register(options.body.options, tamper)
    return s.request('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
  }

  async function logIn(authenticator: SoftwareAuthenticator, tamper?: Tamper): Promise<Reply> {
    const options = await s.request('POST', '/v1/auth/passkey/login/options', { json: {} })
    const response = await authenticator.login(options.body.options, tamper)
    return s.request('POST', '/v1/auth/passkey/login/verify', {
      json: { challenge_id: options.body.challenge_id, response },
    })
  }

  /** Adds a passkey to the person logged in with `cookie`. */
  async function addPasskey(
    cookie: string,
    authenticator: SoftwareAuthenticator,
    name?: string,
  ): Promise<Reply> {
    const options = await s.request('POST', '/v1/app/passkeys/options', { cookie })
    if (options.status !== 200) return options
    const response = await authenticator.register(options.body.options)
    return s.request('POST', '/v1/app/passkeys/verify', {
      cookie,
      json: { challenge_id: options.body.challenge_id, response, name },
    })
  }

  /** The token in the setup link (`.../setup#token=XXX`). */
  async function setupToken(): Promise<string> {
    const link = (await issueSetupToken(s.ctx)) as string
    return new URL(link).hash.slice('#token='.length)
  }

  /** The owner, created through first-run setup with a passkey; returns their session cookie. */
  async function setUpOwner(email = 'owner@example.com') {
    const authenticator = new SoftwareAuthenticator(origin)
    const reply = await signUp(authenticator, { email, setup_token: await setupToken() })
    if (reply.status !== 200) throw new Error(`setup failed: ${JSON.stringify(reply.body)}`)
    return { authenticator, cookie: reply.cookie as string, user: reply.body.user }
  }

  /** An invite row as the owner's "invite someone" would create it; returns its secret. */
  async function invite(
    createdBy: string,
    email: string | null = null,
    ttlMs = 3600_000,
  ): Promise<string> {
    const secret = `inv-secret-${newId('inv')}`
    await s.ctx.store.invites.insert({
      id: newId('inv'),
      hash: hashToken(secret),
      created_by: createdBy,
      email,
      created_at: clock.now(),
      expires_at: clock.now() + ttlMs,
    })
    return secret
  }

  return Object.assign(s, {
    clock,
    signUp,
    logIn,
    addPasskey,
    setupToken,
    setUpOwner,
    invite,
    authenticator: () => new SoftwareAuthenticator(origin),
    origin,
    rpId: new URL(origin).hostname,
  })
}

export type FreshServer = Awaited<ReturnType<typeof startFreshServer>>
