import { rmSync } from 'node:fs'
import { startSession } from '../../src/access/sessions/service.ts'
import type { Clock } from '../../src/core/clock.ts'
import { silentLogger } from '../../src/core/log.ts'
import type { UserRow } from '../../src/people/store.ts'
import { buildApp } from '../../src/server/app.ts'
import { type Config, DEFAULTS } from '../../src/server/config.ts'
import { type Ctx, closeContext, createContext } from '../../src/server/context.ts'
import { BASE, type TestServer, tempDir } from '../harness.ts'

/** The Origin a browser on the app sends: the harness's base URL. */
export const ORIGIN = BASE

/** A settable clock, so expiry is tested without waiting. */
export class TestClock implements Clock {
  constructor(public ms = Date.now()) {}
  now = () => this.ms
  advance(ms: number): void {
    this.ms += ms
  }
}

/** A logged-in browser: a fresh session for `email` (the owner by default). */
export function logIn(
  s: Pick<TestServer, 'ctx' | 'ownerEmail'>,
  email = s.ownerEmail,
  userAgent = 'test-agent',
): { cookie: string; sessionId: string; user: UserRow; setCookie: string } {
  const user = s.ctx.store.users.byEmail(email)
  if (!user) throw new Error(`no user ${email}`)
  const { session, setCookie } = startSession(s.ctx, user, userAgent)
  // `hark_session=SECRET; Path=/; ...` → `hark_session=SECRET`
  const cookie = setCookie.split(';')[0] as string
  return { cookie, sessionId: session.id, user, setCookie }
}

export interface BrowserOptions {
  json?: unknown
  body?: BodyInit
  cookie?: string
  /** The Origin header; `null` leaves it out. Defaults to the app's own origin. */
  origin?: string | null
  headers?: Record<string, string>
}

export interface Reply {
  status: number
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the JSON holds
  body: any
  headers: Headers
}

/** A request as the web app makes it: cookie-borne, with the browser's Origin. */
export async function browser(
  s: Pick<TestServer, 'app'>,
  method: string,
  path: string,
  o: BrowserOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers }
  if (o.cookie) headers.cookie = o.cookie
  const origin = o.origin === undefined ? ORIGIN : o.origin
  if (origin !== null) headers.origin = origin
  let body = o.body
  if (o.json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(o.json)
  }
  const response = await s.app.handle(new Request(BASE + path, { method, headers, body }))
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = text
  }
  return { status: response.status, body: parsed, headers: response.headers }
}

/** A server with nobody in it yet (the harness always provisions an owner): first run. */
export interface FreshServer {
  ctx: Ctx
  app: ReturnType<typeof buildApp>
  dir: string
  close(): void
}

export function startFreshServer(clock?: Clock, overrides: Partial<Config> = {}): FreshServer {
  const dir = tempDir('hark-people-')
  const config: Config = {
    dataDir: dir,
    host: '127.0.0.1',
    port: 0,
    baseUrl: BASE,
    writeLimit: 0,
    maxFileSize: DEFAULTS.maxFileSize,
    ...overrides,
  }
  const ctx = createContext(config, { clock, log: silentLogger })
  const app = buildApp(ctx)
  let closed = false
  return {
    ctx,
    app,
    dir,
    close() {
      if (!closed) closeContext(ctx)
      closed = true
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Counts rows of `table` (optionally `WHERE where`), straight from the database. */
export function count(ctx: Ctx, table: string, where = '1', ...args: string[]): number {
  const row = ctx.db.query(`SELECT count(*) AS n FROM ${table} WHERE ${where}`).get(...args)
  return (row as { n: number }).n
}

/** The error body's `field`, for 400s. */
export async function fieldOf(response: Response): Promise<string | undefined> {
  return ((await response.json()) as { field?: string }).field
}

/** Settles with the promise's value, or `'pending'` if it is still open after `ms`. */
export async function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | 'pending'> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
