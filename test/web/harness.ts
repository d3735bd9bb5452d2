// test-needs: chromium
// (Debian's Chromium (/usr/bin/chromium): every file using this harness is an e2e file. See scripts/test-parts.ts.)
import { afterAll, beforeAll } from 'bun:test'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core'
import { cookieName } from '../../src/access/sessions/service.ts'
import { startTestServer, type TestServer, type TestServerOptions } from '../harness.ts'

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

export async function launchBrowser(
  /** More Chromium flags (a host resolver rule, say). */
  extraArgs: string[] = [],
): Promise<{ browser: Browser; close(): Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)
  }
  // Playwright starts Chromium on a fresh temporary profile of its own and removes it on close.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [...CHROMIUM_ARGS, ...extraArgs],
    headless: true,
  })
  return { browser, close: () => browser.close() }
}

/**
 * The test server on loopback for a real browser: its base URL is `http://localhost:PORT`,
 * because a WebAuthn relying party must be a domain name, never an IP address; cookies, Origin
 * checks and the relying party all match it. An owner with a "Build bot" channel unless told.
 */
export async function startWebServer(options: TestServerOptions = {}): Promise<TestServer> {
  return await startTestServer({
    listen: true,
    baseUrl: 'http://localhost',
    label: 'Build bot',
    ...options,
  })
}

/**
 * A browser context logged in by a session made on the server, for tests where
 * the login flow itself is not under test. Service workers are off unless asked for: a cached
 * shell would hide what the server serves.
 */
export async function loggedInContext(
  browser: Browser,
  server: TestServer,
  options: {
    /** Whose session: the owner's by default. */
    email?: string
    viewport?: { width: number; height: number }
    serviceWorkers?: boolean
  } = {},
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport: options.viewport ?? DESKTOP,
    serviceWorkers: options.serviceWorkers ? 'allow' : 'block',
  })
  const { cookie } = await server.session(options.email, 'playwright')
  await context.addCookies([
    {
      name: cookieName(server.ctx),
      value: cookie.split('=').slice(1).join('='),
      url: server.url,
      httpOnly: true,
      sameSite: 'Strict',
    },
  ])
  return context
}

/** Chromium and the test server of one test file (see `webTest`). */
export interface WebTest {
  readonly browser: Browser
  readonly server: TestServer
  /** A fresh context logged in as the owner (see `loggedInContext`), closed with the browser. */
  context(options?: LoginOptions): Promise<BrowserContext>
  /** A page in such a context, its errors watched, opened at `path` when given. */
  open(options?: LoginOptions & { path?: string }): Promise<{
    context: BrowserContext
    page: Page
    errors: string[]
  }>
}

type LoginOptions = NonNullable<Parameters<typeof loggedInContext>[2]>

/**
 * For a test file: Chromium and the test server (see `startWebServer`), started before its
 * tests; after them the contexts it made, the browser and the server are closed, in that order.
 */
export function webTest(options: TestServerOptions | (() => TestServerOptions) = {}): WebTest {
  let chrome: { browser: Browser; close(): Promise<void> } | undefined
  let server: TestServer | undefined
  const contexts: BrowserContext[] = []
  // 60 s, not the tests' 30: on a loaded 2-core machine a browser starts beside another
  // file's, and a failed start loses every test of the file at once.
  beforeAll(async () => {
    chrome = await launchBrowser()
    // A function when the options are made in an earlier beforeAll (a mail trap, say).
    server = await startWebServer(typeof options === 'function' ? options() : options)
  }, 60_000)
  afterAll(async () => {
    for (const context of contexts) await context.close()
    await chrome?.close()
    await server?.close()
  }, 60_000)
  const started = () => {
    if (!chrome || !server) throw new Error('the browser and server start in beforeAll')
    return { browser: chrome.browser, server }
  }
  const web: WebTest = {
    get browser() {
      return started().browser
    },
    get server() {
      return started().server
    },
    async context(login) {
      const context = await loggedInContext(web.browser, web.server, login)
      contexts.push(context)
      return context
    },
    async open({ path, ...login } = {}) {
      const context = await web.context(login)
      const page = await context.newPage()
      const errors = watchErrors(page)
      if (path !== undefined) await page.goto(`${web.server.url}${path}`)
      return { context, page, errors }
    },
  }
  return web
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
