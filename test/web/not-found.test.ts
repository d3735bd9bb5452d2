import { describe, expect, test } from 'bun:test'
import { PHONE, screenshot, webTest } from './harness.ts'

/**
 * An address the app has no screen for (issue 28: `/approvals`, which the README once named)
 * opens the app, status 404, on its "not found" screen with the way home, never a raw JSON
 * error. The server's side is test/server/app-paths.test.ts.
 */
const web = webTest()

describe('GET /approvals in the browser', () => {
  test('the app\'s "not found" screen, with a way to the list; both themes', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const { page, errors, context } = await web.open({ viewport: PHONE })
      try {
        await page.emulateMedia({ colorScheme: scheme })
        const response = await page.goto(`${web.server.url}/approvals`)
        expect(response?.status()).toBe(404)
        await page.getByRole('heading', { name: 'Not found' }).waitFor()
        expect(await page.locator('main').textContent()).toContain('no page at /approvals')
        expect(await page.locator('main').textContent()).toContain('Waiting on you')
        await screenshot(page, `not-found-phone-${scheme}`)
        await page.getByRole('link', { name: 'Go to your agents' }).click()
        await page.locator('.channel-list').waitFor()
        expect(new URL(page.url()).pathname).toBe('/')
        // The 404 of the page itself is the browser's console line, not the app's error.
        expect(errors.filter((e) => !/status of 404/.test(e))).toEqual([])
      } finally {
        await context.close()
      }
    }
  }, 30_000)
})
