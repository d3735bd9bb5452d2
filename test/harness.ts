import { copyFileSync, rmSync } from 'node:fs'
import { startSession } from '../src/access/sessions/service.ts'
import {
  type AgentClient,
  createAgentClient,
  createPersonClient,
  type PersonClient,
} from '../src/agent/client.ts'
import type { Clock } from '../src/core/clock.ts'
import { type Config, DEFAULTS } from '../src/core/config.ts'
import { type Logger, silentLogger, stderrLogger as stderrLoggerForTests } from '../src/core/log.ts'
import { createSmtpMailer, type Mailer } from '../src/core/mailer.ts'
import { databasePath, openDatabase } from '../src/db/database.ts'
import { addChannel, addPersonToken, addUser } from '../src/people/service.ts'
import type { UserRow } from '../src/people/store.ts'
import type { Resolver } from '../src/push/endpoint.ts'
import { type App, buildApp, handlerOf } from '../src/server/app.ts'
import { closeContext, createContext, type SqliteCtx } from '../src/server/context.ts'
import type { Running } from '../src/server/listen.ts'
import { startServer } from '../src/server/serve.ts'
import type { MailTrap } from './email/mail-trap.ts'
import { type Reply, type RequestOptions, request } from './harness-request.ts'
import { tempDir } from './harness-util.ts'

export type { Reply, RequestOptions } from './harness-request.ts'
export { failsWith, gate, sleep, TestClock, tempDir, until } from './harness-util.ts'

/**
 * The one test harness: a real server (real SQLite file in a temporary directory, the real app)
 * started one way, with options for what differs between suites, and the one clock and the one
 * raw request helper every suite shares. Specialised fixtures (passkey authenticator, push
 * receiver, SMTP trap, Chromium, CLI processes) build on it. Its request by hand is in
 * harness-request.ts, its server-less aids (temp dirs, the clock, waits) in harness-util.ts;
 * both are re-exported here, so a test imports the harness from this one file.
 */

/** The base URL of an in-process server: never resolved, only compared. */
export const BASE = 'http://hark.test'
/** The owner every provisioned server has. */
export const OWNER = 'owner@example.com'
/** The sender of the server's mail when a test points it at a mail trap. */
export const MAIL_FROM = 'hark@example.com'

/**
 * What differs between suites. Config fields override the test defaults (no write limit, the
 * base URL below); `dataDir` opens an existing data dir (a restored backup, an old database)
 * instead of a fresh temporary one.
 */
export interface TestServerOptions extends Partial<Config> {
  /**
   * An owner (`OWNER`) with one channel and a person token, as `hark admin` provisions them
   * (default); false: nobody at all yet, as on first run.
   */
  owner?: boolean
  /** The owner's first channel's label. */
  label?: string
  /** false: the owner has no channel yet, as after signing up. */
  channel?: boolean
  /** Where the server's mail goes: a mailer, or a mail trap it then talks SMTP to. */
  mailer?: Mailer | MailTrap
  clock?: Clock
  log?: Logger
  /**
   * false (default): requests go to the server's handler in-process (everything but the socket).
   * true: a real server on a loopback socket, `url` and `port` its address.
   */
  listen?: boolean
  /** Bun's idle timeout in seconds, for a listening server. */
  idleTimeout?: number
  /** DNS lookups of push endpoints (`ContextOptions.resolve`). */
  resolve?: Resolver
}

export interface TestSession {
  /** `name=value`, for a Cookie header. */
  cookie: string
  sessionId: string
  user: UserRow
  setCookie: string
}

export interface TestServer {
  /** The open context (a new one after `restart()`). */
  readonly ctx: SqliteCtx
  readonly app: App
  /** Answers a request as the server does: in-process, or over the socket when listening. */
  handle(request: Request): Promise<Response>
  dir: string
  /** The base URL, where clients and browsers go. */
  readonly url: string
  /** The listening port; 0 in-process. */
  readonly port: number
  /** The running server, when listening. */
  readonly running: Running | undefined
  ownerEmail: string
  /** The first channel, its agent client and token ('' without an owner). */
  agent: AgentClient
  channelId: string
  agentToken: string
  /** The owner's person client and token ('' without an owner). */
  person: PersonClient
  personToken: string
  /** The transport with no token or with any token given, for requests by hand. */
  raw(token?: string): AgentClient
  agentClient(token?: string): AgentClient
  personClient(token?: string): PersonClient
  /** Another channel of the owner (or of another person, made if new, with `email`). */
  addChannel(
    label?: string,
    email?: string,
  ): Promise<{ agent: AgentClient; channelId: string; token: string }>
  /** Another person (made if new) with a person token of their own. */
  addPerson(email: string): Promise<PersonClient>
  /** A fresh browser session for `email` (the owner by default), made on the server. */
  session(email?: string, userAgent?: string): Promise<TestSession>
  /**
   * A person client logged in as a browser is (a session cookie, the app's Origin): for what a
   * person token may not do (minting tokens, passkeys, approving pairings).
   */
  sessionClient(email?: string): Promise<PersonClient>
  /** One request by hand: any method, body, credentials and Origin. */
  request(method: string, path: string, options?: RequestOptions): Promise<Reply>
  /** Stops the server (answering held long-polls, closing the database); the data dir stays. */
  stop(): Promise<void>
  /** Opens the same data dir again (on the same port when listening), as a restart would. */
  start(): Promise<void>
  /** `stop()` then `start()`; the clients and tokens keep working. */
  restart(): Promise<TestServer>
  /** Stops and removes the data dir. */
  close(): Promise<void>
}

const isTrap = (m: Mailer | MailTrap): m is MailTrap => 'next' in m

/**
 * A data directory holding a migrated, empty database: a copy of one migrated once per test
 * process (issue 33: a copy takes a tenth of the migrations' time, and most tests start
 * several servers). Server keys and the rest are made by createContext on each copy, as on a
 * fresh file.
 */
let template: string | undefined
function migratedDataDir(): string {
  if (!template) {
    const dir = tempDir('hark-template-')
    openDatabase(databasePath(dir)).close()
    process.on('exit', () => rmSync(dir, { recursive: true, force: true }))
    template = databasePath(dir)
  }
  const dir = tempDir()
  copyFileSync(template, databasePath(dir))
  return dir
}

/** A real server on a real SQLite file, started one way for every suite (see the options). */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const {
    owner = true,
    label = 'Test agent',
    channel = true,
    mailer,
    clock,
    log = process.env.HARK_TEST_LOG ? stderrLoggerForTests : silentLogger,
    listen = false,
    idleTimeout,
    resolve,
    ...overrides
  } = options
  const dir = overrides.dataDir ?? migratedDataDir()
  const config: Config = {
    ...DEFAULTS,
    host: '127.0.0.1',
    port: 0,
    baseUrl: listen ? 'http://127.0.0.1' : BASE,
    writeLimit: 0,
    ...overrides,
    dataDir: dir,
  }
  const smtp = mailer && isTrap(mailer) ? createSmtpMailer(mailer.url, MAIL_FROM) : mailer

  // Set by boot(), at once and again on every start.
  let ctx!: SqliteCtx
  let app: App | undefined
  let handler!: (request: Request) => Promise<Response>
  let running: Running | undefined
  let open = false
  const boot = async () => {
    ctx = await createContext(config, { clock, log, mailer: smtp, resolve })
    if (listen) {
      running = await startServer(ctx, { idleTimeout })
      app = undefined
      handler = (request) => fetch(request)
      if (config.port === 0) {
        // Port 0 picks a free port; the base URL names it, and a restart comes back on it.
        config.port = running.server.port as number
        const base = new URL(config.baseUrl)
        if (!base.port) base.port = String(config.port)
        config.baseUrl = base.origin
      }
    } else {
      app = buildApp(ctx)
      // What the server runs: the lean long-poll routes, then the app.
      handler = handlerOf(ctx, app)
    }
    open = true
  }
  await boot()
  // Where requests go, fixed once the port is known: a test may change the configured base URL
  // (to see what the app makes of a mismatch) without moving the server.
  const baseUrl = config.baseUrl.replace(/\/+$/, '')
  // Clients go through the current handler, so they outlive a restart.
  const handle = (request: Request) => handler(request)
  const opts = (token?: string) => ({ baseUrl, token, fetch: handle })
  const agentClient = (token?: string) => createAgentClient(opts(token))
  const personClient = (token?: string) => createPersonClient(opts(token))
  const userOf = async (email: string) => {
    const user = await ctx.store.users.byEmail(email)
    if (!user) throw new Error(`no user ${email}`)
    return user
  }

  let channelId = ''
  let agentToken = ''
  let personToken = ''
  if (owner) {
    // A data dir opened again (a restored backup) has its owner already.
    if (!(await ctx.store.users.byEmail(OWNER))) await addUser(ctx, { email: OWNER, owner: true })
    if (channel) {
      const made = await addChannel(ctx, { email: OWNER, label })
      channelId = made.channel.id
      agentToken = made.token
    }
    personToken = (await addPersonToken(ctx, { email: OWNER })).token
  }
  // Provisioned and on disk before the test goes on: it may open the file itself (a backup).
  await ctx.writes.flush()

  // In-process, stopping and closing are done by the time they return: a test may go on at once.
  const stop = async (): Promise<void> => {
    if (!open) return Promise.resolve()
    open = false
    if (running) return running.stop()
    await closeContext(ctx)
    return Promise.resolve()
  }
  const remove = () => rmSync(dir, { recursive: true, force: true })

  const server: TestServer = {
    get ctx() {
      return ctx
    },
    get app() {
      // A listening server keeps its app inside; one on the same context answers the same.
      app ??= buildApp(ctx)
      return app
    },
    handle,
    dir,
    url: baseUrl,
    get port() {
      return listen ? config.port : 0
    },
    get running() {
      return running
    },
    ownerEmail: OWNER,
    agent: agentClient(agentToken),
    channelId,
    agentToken,
    person: personClient(personToken),
    personToken,
    raw: (token) => createAgentClient(opts(token)),
    agentClient,
    personClient,
    async addChannel(channelLabel = 'Other agent', email = OWNER) {
      if (!(await ctx.store.users.byEmail(email))) await addUser(ctx, { email })
      const made = await addChannel(ctx, { email, label: channelLabel })
      return { agent: agentClient(made.token), channelId: made.channel.id, token: made.token }
    },
    async addPerson(email) {
      if (!(await ctx.store.users.byEmail(email))) await addUser(ctx, { email })
      return personClient((await addPersonToken(ctx, { email })).token)
    },
    async session(email = OWNER, userAgent = 'test-agent') {
      const user = await userOf(email)
      const { session, setCookie } = await startSession(ctx, user, userAgent)
      // `hark_session=SECRET; Path=/; ...` → `hark_session=SECRET`
      const cookie = setCookie.split(';')[0] as string
      return { cookie, sessionId: session.id, user, setCookie }
    },
    async sessionClient(email = OWNER) {
      const { cookie } = await server.session(email, 'test-browser')
      return createPersonClient({
        baseUrl,
        fetch: handle,
        headers: { cookie, origin: new URL(baseUrl).origin },
      })
    },
    request: (method, path, o = {}) => request(server, method, path, o),
    stop,
    async start() {
      if (!open) await boot()
    },
    async restart() {
      await stop()
      await boot()
      return server
    },
    async close() {
      if (listen) return stop().then(remove)
      await stop()
      remove()
      return Promise.resolve()
    },
  }
  return server
}
