import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { cookieName, startSession } from '../../src/access/sessions/service.ts'
import { type AgentClient, createAgentClient } from '../../src/agent/client.ts'
import { type Logger, silentLogger } from '../../src/core/log.ts'
import type { Mailer } from '../../src/core/mailer.ts'
import { addChannel, addUser } from '../../src/people/service.ts'
import type { UserRow } from '../../src/people/store.ts'
import { DEFAULTS } from '../../src/server/config.ts'
import { type Ctx, createContext } from '../../src/server/context.ts'
import { type Running, startServer } from '../../src/server/serve.ts'

/**
 * The web app in a real browser against a real server on loopback: Debian's Chromium driven by
 * playwright-core (never a downloaded browser), a server listening on port 0 whose base URL is
 * its own address, so cookies, Origin checks and the passkey relying party all match.
 */
export const CHROMIUM = '/usr/bin/chromium'

const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export const SCREENSHOTS = join(import.meta.dir, 'screenshots')

export const PHONE = { width: 390, height: 844 }
export const DESKTOP = { width: 1280, height: 800 }

export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  }
  // Playwright starts Chromium on a fresh temporary profile of its own and removes it on close.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
    headless: true,
  })
  return { browser, close: () => browser.close() }
}

export interface WebServer {
  ctx: Ctx
  /** `http://localhost:PORT`: the base URL, and where the browser goes. */
  url: string
  running: Running
  stop(): Promise<void>
}

/**
 * A fresh data directory and a listening server. `localhost` rather than 127.0.0.1 because a
 * WebAuthn relying party must be a domain name, never an IP address. With a `mailer`, the
 * server sends email codes (tests point it at a mail trap); `pushAllowHosts` lets pushes go to
 * a test's local receiver.
 */
export async function startWebServer(
  options: { log?: Logger; mailer?: Mailer; pushAllowHosts?: string[] } = {},
): Promise<WebServer> {
  const dir = mkdtempSync(join(tmpdir(), 'hark-web-'))
  const ctx = createContext(
    {
      dataDir: dir,
      host: '127.0.0.1',
      port: 0,
      baseUrl: 'http://localhost',
      writeLimit: 0,
      maxFileSize: DEFAULTS.maxFileSize,
      pushAllowHosts: options.pushAllowHosts,
    },
    { log: options.log ?? silentLogger, mailer: options.mailer },
  )
  const running = startServer(ctx)
  const url = `http://localhost:${running.server.port}`
  ctx.config.baseUrl = url
  return {
    ctx,
    url,
    running,
    async stop() {
      await running.stop()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export interface Provisioned {
  owner: UserRow
  channelId: string
  token: string
  agent: AgentClient
}

/** An owner with one channel, as `hark admin` would make them. */
export function provision(server: WebServer, label = 'Build bot'): Provisioned {
  const email = 'owner@example.com'
  const owner = server.ctx.store.users.byEmail(email) ?? addUser(server.ctx, { email, owner: true })
  const made = addChannel(server.ctx, { email, label })
  return {
    owner,
    channelId: made.channel.id,
    token: made.token,
    agent: createAgentClient({ baseUrl: server.url, token: made.token }),
  }
}

/** Another channel for the same person. */
export function addAgent(server: WebServer, email: string, label: string) {
  const made = addChannel(server.ctx, { email, label })
  return {
    channelId: made.channel.id,
    agent: createAgentClient({ baseUrl: server.url, token: made.token }),
  }
}

/**
 * A browser context logged in as `user` by a session made on the server, for tests where
 * the login flow itself is not under test. Service workers are off unless asked for: a cached
 * shell would hide what the server serves.
 */
export async function loggedInContext(
  browser: Browser,
  server: WebServer,
  user: UserRow,
  options: { viewport?: { width: number; height: number }; serviceWorkers?: boolean } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    serviceWorkers: options.serviceWorkers ? 'allow' : 'block',
  })
  const { setCookie } = startSession(server.ctx, user, 'playwright')
  const value = (setCookie.split(';')[0] as string).split('=').slice(1).join('=')
  await context.addCookies([
    {
      name: cookieName(server.ctx),
      value,
      url: server.url,
      httpOnly: true,
      sameSite: 'Strict',
    },
  ])
  return context
}

/** Chromium's virtual authenticator: a platform passkey that always verifies the user. */
export async function addVirtualAuthenticator(page: Page): Promise<string> {
  const cdp = await page.context().newCDPSession(page)
  await cdp.send('WebAuthn.enable')
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
    },
  })
  return authenticatorId
}

/**
 * Collects the page's console errors (CSP violations among them) and uncaught exceptions, to
 * assert there are none. A 401 is how the app learns nobody is logged in: not an error.
 */
export function watchErrors(page: Page): string[] {
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`))
  page.on('console', (m) => {
    if (m.type() !== 'error') return
    if (/status of 401/.test(m.text())) return
    errors.push(`console: ${m.text()}`)
  })
  return errors
}

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const path = join(SCREENSHOTS, `${name}.png`)
  await page.screenshot({ path, fullPage: false })
  return path
}
