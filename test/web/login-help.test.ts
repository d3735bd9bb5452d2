import { describe, expect, test } from 'bun:test'
import { addVirtualAuthenticator, PHONE, screenshot, watchErrors, webTest } from './harness.ts'

/**
 * The login screen on a device without a passkey (issue 28): a failed passkey prompt is no dead
 * end. Without an email server (this one has none) it says how to get in: a sign-in link the
 * owner makes with `hark admin user link`. (With one, the emailed code: account.test.ts.)
 */
const web = webTest()

describe('GET / logged out, no email server', () => {
  test('a failed passkey prompt leaves the way in on screen: ask the owner for a sign-in link', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const context = await web.browser.newContext({ viewport: PHONE, serviceWorkers: 'block' })
      try {
        const page = await context.newPage()
        const errors = watchErrors(page)
        // An authenticator with no passkey for this server: the prompt fails, as on a new phone.
        await addVirtualAuthenticator(page)
        await page.emulateMedia({ colorScheme: scheme })
        await page.goto(web.server.url)
        await page.getByRole('button', { name: 'Log in with a passkey' }).click()
        await page.getByRole('alert').waitFor()
        const help = page.getByRole('region', { name: 'No passkey on this device?' })
        expect(await help.textContent()).toContain('hark admin user link YOUR-EMAIL')
        expect(await help.textContent()).toContain('Ask the owner of this Hark for a sign-in link')
        // No email server: no promise of a code that cannot come.
        expect(await page.getByRole('button', { name: 'Email me a code' }).count()).toBe(0)
        await screenshot(page, `login-no-passkey-phone-${scheme}`)
        expect(errors.filter((e) => !/NotAllowedError|passkey/i.test(e))).toEqual([])
      } finally {
        await context.close()
      }
    }
  }, 60_000)
})
