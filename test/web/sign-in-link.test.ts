import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { requireBinary, run, type Served, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import {
  addVirtualAuthenticator,
  launchBrowser,
  PHONE,
  screenshot,
  watchErrors,
} from './harness.ts'

/**
 * Headless provisioning, as an operator does it: `hark admin user add` on the compiled binary
 * (a server with no email) prints a sign-in link; the person opens it on a phone, where Chromium's
 * virtual authenticator makes the passkey, and is in. `hark admin user link` gives a lost-phone
 * person a new link; the spent one is refused.
 */
const dir = tempDir('hark-web-link-')
let served: Served
let base = ''
let browser: Browser
let closeBrowser: () => Promise<void>
const contexts: BrowserContext[] = []

// 60 s, not the tests' 30 (as webTest): on a loaded 2-core machine a browser starts beside
// another file's, and a failed start loses every test of the file at once.
beforeAll(async () => {
  requireBinary()
  served = await startServe(['--data', dir])
  // The server's base URL is http://localhost:PORT: a relying party must be a name, not an IP.
  base = served.url.replace('127.0.0.1', 'localhost')
  ;({ browser, close: closeBrowser } = await launchBrowser())
}, 60_000)
afterAll(async () => {
  for (const c of contexts) await c.close()
  await closeBrowser?.()
  served?.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}, 60_000)

/** A phone with its own passkey store and no session. */
async function phone(): Promise<{ page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: PHONE, hasTouch: true, isMobile: true })
  contexts.push(context)
  const page = await context.newPage()
  const errors = watchErrors(page)
  await addVirtualAuthenticator(page)
  return { page, errors }
}

async function linkOf(args: string[]): Promise<string> {
  const r = await run(['admin', 'user', ...args, '--data', dir, '--base-url', base])
  expect(r.stderr).toBe('')
  expect(r.code).toBe(0)
  const link = r.stdout.trim().split('\n').at(-1) as string
  expect(link).toStartWith(`${base}/enrol#`)
  return link
}

const me = (page: Page) =>
  page.evaluate(async () => {
    const r = await fetch('/v1/app/me')
    return r.ok ? ((await r.json()) as { user: { email: string } }).user.email : r.status
  })

describe('sign-in links in the browser (dist/hark, virtual authenticator)', () => {
  let first = ''

  test('user add --owner (no setup link, no email) → the link enrols a passkey on the phone and signs the person in', async () => {
    first = await linkOf(['add', 'pat@example.com', '--owner', '--name', 'Pat'])
    const { page, errors } = await phone()
    await page.goto(first)
    // The secret leaves the address bar at once.
    await page.waitForFunction(() => location.pathname === '/enrol' && location.hash === '')
    await page.getByRole('heading', { name: 'Sign in to Hark' }).waitFor()
    await screenshot(page, 'sign-in-link-phone')
    await page.getByRole('button', { name: 'Create a passkey and sign in' }).click()
    await page.waitForURL(`${base}/`)
    await page.getByRole('link', { name: 'Settings' }).waitFor()
    expect(await me(page)).toBe('pat@example.com')
    // Logging out and in again with the new passkey works: it is a real login, not a one-off.
    await page.evaluate(() => fetch('/v1/app/logout', { method: 'POST' }))
    expect(await me(page)).toBe(401)
    await page.goto(base)
    await page.getByRole('button', { name: 'Log in with a passkey' }).click()
    await page.getByRole('link', { name: 'Settings' }).waitFor()
    expect(await me(page)).toBe('pat@example.com')
    expect(errors).toEqual([])
  })

  test('the spent link is refused on another device, saying what to do', async () => {
    const { page } = await phone()
    await page.goto(first)
    await page.getByRole('button', { name: 'Create a passkey and sign in' }).click()
    await page.getByText('sign-in link is not valid').waitFor()
    expect(await me(page)).toBe(401)
  })

  test('user link → a lost phone gets a new passkey; the link never reached the server log', async () => {
    const second = await linkOf(['link', 'pat@example.com'])
    const { page, errors } = await phone()
    await page.goto(second)
    await page.getByRole('button', { name: 'Create a passkey and sign in' }).click()
    await page.getByRole('link', { name: 'Settings' }).waitFor()
    expect(await me(page)).toBe('pat@example.com')
    const keys = await page.evaluate(async () => {
      const r = await fetch('/v1/app/passkeys')
      return ((await r.json()) as { passkeys: unknown[] }).passkeys.length
    })
    expect(keys).toBe(2)
    for (const link of [first, second]) {
      expect(served.log()).not.toContain(new URL(link).hash.slice(1))
    }
    expect(errors).toEqual([])
  })
})
