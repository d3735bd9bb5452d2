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

/**
 * The test server on loopback for a real browser: its base URL is `http://localhost:PORT`,
 * because a WebAuthn relying party must be a domain name, never an IP address; cookies, Origin
 * checks and the relying party all match it. An owner with a "Build bot" channel unless told.
 */
export function startWebServer(options: TestServerOptions = {}): TestServer {
  return startTestServer({
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
  const { cookie } = server.session(options.email, 'playwright')
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
