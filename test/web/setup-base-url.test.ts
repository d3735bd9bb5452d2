import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { issueSetupToken } from '../../src/people/setup.ts'
import type { TestServer } from '../harness.ts'
import { launchBrowser, PHONE, startWebServer, watchErrors } from './harness.ts'

/** The setup wizard checks that it is opened at the server's base URL (passkeys depend on it). */
let chrome: { browser: Browser; close(): Promise<void> }
let server: TestServer

beforeAll(async () => {
  chrome = await launchBrowser()
  server = startWebServer({ owner: false })
})

afterAll(async () => {
  await chrome?.close()
  await server?.close()
})

test('at the base URL the wizard shows the address; elsewhere it warns before any passkey', async () => {
  const context = await chrome.browser.newContext({ viewport: PHONE })
  const page = await context.newPage()
  const errors = watchErrors(page)
  await page.goto(issueSetupToken(server.ctx) as string)
  await page.locator('[data-check="base-url-ok"]').waitFor()
  expect(await page.locator('[data-check="base-url-ok"]').textContent()).toContain(server.url)
  expect(await page.locator('[data-check="base-url-mismatch"]').count()).toBe(0)

  // The operator set another address (a proxy name, say) but the page was opened directly.
  const real = server.ctx.config.baseUrl
  server.ctx.config.baseUrl = 'https://hark.example.com'
  try {
    // The printed link names the set address; open the same link at the direct one.
    const link = (issueSetupToken(server.ctx) as string).replace(
      'https://hark.example.com',
      server.url,
    )
    // A fresh page: the app reads the server's info once, when it loads.
    const fresh = await context.newPage()
    const freshErrors = watchErrors(fresh)
    await fresh.goto(link)
    const warning = fresh.getByRole('alert')
    await warning.waitFor()
    const text = (await warning.textContent()) ?? ''
    expect(text).toContain('https://hark.example.com')
    expect(text).toContain(server.url)
    expect(text).toContain('--base-url')
    expect(freshErrors).toEqual([])
  } finally {
    server.ctx.config.baseUrl = real
  }
  expect(errors).toEqual([])
  await context.close()
})
