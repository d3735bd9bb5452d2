import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startSession } from '../src/access/sessions/service.ts'
import {
  type AgentClient,
  createAgentClient,
  createPersonClient,
  createTransport,
  type PersonClient,
} from '../src/agent/client.ts'
import type { Clock } from '../src/core/clock.ts'
import { silentLogger } from '../src/core/log.ts'
import { addChannel, addPersonToken, addUser } from '../src/people/service.ts'
import { buildApp, handlerOf } from '../src/server/app.ts'
import { type Config, DEFAULTS } from '../src/server/config.ts'
import { type Ctx, closeContext, createContext } from '../src/server/context.ts'

export const BASE = 'http://hark.test'

export function tempDir(prefix = 'hark-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export interface TestServer {
  ctx: Ctx
  app: ReturnType<typeof buildApp>
  dir: string
  /** The first channel's agent client. */
  agent: AgentClient
  channelId: string
  /** The owner's person client. */
  person: PersonClient
  /** The tokens behind `agent` and `person`, for raw requests. */
  agentToken: string
  personToken: string
  ownerEmail: string
  /** Raw clients with no token, or with any token given. */
  raw(token?: string): ReturnType<typeof createTransport>
  agentClient(token?: string): AgentClient
  personClient(token?: string): PersonClient
  /** Another channel of the owner (or of another person, with `email`). */
  addChannel(
    label?: string,
    email?: string,
  ): { agent: AgentClient; channelId: string; token: string }
  /** Another person with their own token. */
  addPerson(email: string): PersonClient
  /**
   * A person client logged in as a browser is (a session cookie, the app's Origin): for what a
   * person token may not do (minting agent tokens, passkeys).
   */
  sessionClient(email?: string): PersonClient
  /** Closes the context (settling long-polls) and removes the data dir. */
  close(): void
  /** Closes and opens the same data dir again, as a restart would. */
  restart(): TestServer
}

/**
 * A real server on a real SQLite file in a temporary directory, driven through `app.handle()`:
 * everything but the socket. Provisioned like `hark admin` does it: an owner and one channel.
 */
export function startTestServer(
  overrides: Partial<Config> = {},
  options: {
    clock?: Clock
    dir?: string
    reuse?: { agent?: string; person?: string; channelId: string }
  } = {},
): TestServer {
  const dir = options.dir ?? tempDir()
  const config: Config = {
    dataDir: dir,
    host: '127.0.0.1',
    port: 0,
    baseUrl: BASE,
    writeLimit: 0,
    maxFileSize: DEFAULTS.maxFileSize,
    ...overrides,
  }
  const ctx = createContext(config, { clock: options.clock, log: silentLogger })
  const app = buildApp(ctx)
  // What the server runs: the lean long-poll routes, then the app.
  const fetch = handlerOf(ctx, app)
  const opts = (token?: string) => ({ baseUrl: BASE, token, fetch })
  const agentClient = (token?: string) => createAgentClient(opts(token))
  const personClient = (token?: string) => createPersonClient(opts(token))
  const ownerEmail = 'owner@example.com'
  let channelId = options.reuse?.channelId ?? ''
  let agentToken = options.reuse?.agent
  let personToken = options.reuse?.person
  if (!options.reuse) {
    if (!ctx.store.users.byEmail(ownerEmail)) addUser(ctx, { email: ownerEmail, owner: true })
    const made = addChannel(ctx, { email: ownerEmail, label: 'Test agent' })
    channelId = made.channel.id
    agentToken = made.token
    personToken = addPersonToken(ctx, { email: ownerEmail }).token
  }
  let closed = false
  const server: TestServer = {
    ctx,
    app,
    dir,
    agent: agentClient(agentToken),
    channelId,
    person: personClient(personToken),
    agentToken: agentToken ?? '',
    personToken: personToken ?? '',
    ownerEmail,
    raw: (token) => createTransport(opts(token)),
    agentClient,
    personClient,
    addChannel(label = 'Other agent', email = ownerEmail) {
      if (!ctx.store.users.byEmail(email)) addUser(ctx, { email })
      const made = addChannel(ctx, { email, label })
      return { agent: agentClient(made.token), channelId: made.channel.id, token: made.token }
    },
    sessionClient(email = ownerEmail) {
      const user = ctx.store.users.byEmail(email)
      if (!user) throw new Error(`no user ${email}`)
      const cookie = startSession(ctx, user, 'test-browser').setCookie.split(';')[0] as string
      return createPersonClient({ baseUrl: BASE, fetch, headers: { cookie, origin: BASE } })
    },
    addPerson(email) {
      if (!ctx.store.users.byEmail(email)) addUser(ctx, { email })
      return personClient(addPersonToken(ctx, { email }).token)
    },
    close() {
      if (!closed) closeContext(ctx)
      closed = true
      rmSync(dir, { recursive: true, force: true })
    },
    restart() {
      if (!closed) closeContext(ctx)
      closed = true
      return startTestServer(overrides, {
        ...options,
        dir,
        reuse: { agent: agentToken, person: personToken, channelId },
      })
    },
  }
  return server
}

/** Resolves after `ms`; for ordering, never as a performance assertion. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** Expects a promise to reject with a HarkApiError of `status`; returns the error. */
export async function failsWith(
  promise: Promise<unknown>,
  status: number,
): Promise<{ status: number; error: string; field?: string; headers: Headers }> {
  try {
    await promise
  } catch (error) {
    const e = error as { status?: number; error?: string; field?: string; headers: Headers }
    if (e.status !== status) {
      throw new Error(`expected ${status}, got ${e.status}: ${e.error ?? error}`)
    }
    return e as { status: number; error: string; field?: string; headers: Headers }
  }
  throw new Error(`expected ${status}, but the request succeeded`)
}
