import { expect, test } from 'bun:test'
import { issueSetupToken } from '../../src/people/setup.ts'
import { PHONE, watchErrors, webTest } from './harness.ts'

/** The setup wizard checks that it is opened at the server's base URL (passkeys depend on it). */
const web = webTest({ owner: false })

test('at the base URL the wizard shows the address; elsewhere it warns before any passkey', async () => {
  const context = await web.browser.newContext({ viewport: PHONE })
  const page = await context.newPage()
  const errors = watchErrors(page)
  await page.goto((await issueSetupToken(web.server.ctx)) as string)
  await page.locator('[data-check="base-url-ok"]').waitFor()
  expect(await page.locator('[data-check="base-url-ok"]').textContent()).toContain(web.server.url)
  expect(await page.locator('[data-check="base-url-mismatch"]').count()).toBe(0)

  // The operator set another address (a proxy name, say) but the page was opened directly.
  const real = web.server.ctx.config.baseUrl
  web.server.ctx.config.baseUrl = 'https://hark.example.com'
  try {
    // The printed link names the set address; open the same link at the direct one.
    const link = ((await issueSetupToken(web.server.ctx)) as string).replace(
      'https://hark.example.com',
      web.server.url,
    )
    // A fresh page: the app reads the server's info once, when it loads.
    const fresh = await context.newPage()
    const freshErrors = watchErrors(fresh)
    await fresh.goto(link)
    const warning = fresh.getByRole('alert')
    await warning.waitFor()
    const text = (await warning.textContent()) ?? ''
    expect(text).toContain('https://hark.example.com')
    expect(text).toContain(web.server.url)
    expect(text).toContain('--base-url')
    expect(freshErrors).toEqual([])
  } finally {
    web.server.ctx.config.baseUrl = real
  }
  expect(errors).toEqual([])
  await context.close()
})
