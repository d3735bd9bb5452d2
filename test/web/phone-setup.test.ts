import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { type Receiver, startReceiver } from '../push/receiver.ts'
import { axeViolations } from './axe-check.ts'
import { launchBrowser, PHONE, screenshot, webTest } from './harness.ts'
import { click, nextPush, notifications, subscribeReceiver, workerPage } from './push-fixture.ts'

/**
 * Issue 27 in a real Chromium: the page shown over plain HTTP from another device, the phone
 * setup (install steps, test notification) in the setup wizard and in Settings, and the
 * browser's raw push errors in words (issue 28, item 15).
 */
const web = webTest({ pushAllowHosts: ['127.0.0.1'] })
let receiver: Receiver
let lan: { browser: Browser; close(): Promise<void> }

// 60 s, not the tests' 30 (as webTest): on a loaded 2-core machine a browser starts beside
// another file's, and a failed start loses every test of the file at once.
beforeAll(async () => {
  receiver = startReceiver()
  // "hark.lan" is another device's view of the box: a name that is not localhost, so plain
  // HTTP there is not a secure context (as http://192.168.1.5:8080 is not).
  lan = await launchBrowser(['--host-resolver-rules=MAP hark.lan 127.0.0.1'])
}, 60_000)
afterAll(async () => {
  await lan?.close()
  receiver?.close()
}, 60_000)

describe('plain HTTP from another device', () => {
  test('shows why Hark needs HTTPS and the three ways to get it, axe clean in both themes', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const context = await lan.browser.newContext({ viewport: PHONE })
      try {
        const page = await context.newPage()
        await page.emulateMedia({ colorScheme: scheme })
        await page.goto(`http://hark.lan:${web.server.port}/`)
        await page.getByRole('heading', { level: 1, name: 'Hark needs HTTPS' }).waitFor()
        expect(await page.evaluate(() => window.isSecureContext)).toBe(false)
        const text = (await page.locator('main').textContent()) ?? ''
        expect(text).toContain(`http://hark.lan:${web.server.port}`)
        expect(text).not.toContain('cannot use passkeys')
        for (const way of [
          'A domain name: Hark gets its own certificate',
          'Your own reverse proxy',
          'A tunnel, for a box at home',
        ]) {
          await page.getByRole('heading', { level: 2, name: way }).waitFor()
        }
        expect(text).toContain('hark serve --domain hark.example.com')
        expect(text).toContain('tailscale serve --bg 8080')
        expect(text).toContain('cloudflared tunnel --url http://localhost:8080')
        expect(
          await page.getByRole('link', { name: 'Behind a reverse proxy' }).getAttribute('href'),
        ).toMatch(/docs\/operations\.md#behind-a-reverse-proxy$/)
        expect({ scheme, found: await axeViolations(page) }).toEqual({ scheme, found: [] })
        await screenshot(page, `needs-https-phone-${scheme}`)
        // Every path, not only the start: a setup or sign-in link opened over HTTP too.
        await page.goto(`http://hark.lan:${web.server.port}/setup#token=x`)
        await page.getByRole('heading', { level: 1, name: 'Hark needs HTTPS' }).waitFor()
      } finally {
        await context.close()
      }
    }
  }, 60_000)

  test('localhost on the server itself is a secure context: the app, not the page', async () => {
    const context = await lan.browser.newContext({ viewport: PHONE })
    try {
      const page = await context.newPage()
      await page.goto(web.server.url)
      await page.locator('main.auth h1').waitFor()
      expect(await page.locator('main.auth h1').textContent()).not.toContain('needs HTTPS')
      await page.getByRole('button', { name: 'Log in with a passkey' }).waitFor()
    } finally {
      await context.close()
    }
  }, 60_000)
})

describe('the test notification: sent, delivered, shown, tapped', () => {
  test('with no device yet, the button says what to do', async () => {
    const { page, context } = await web.open({ viewport: PHONE, path: '/setup' })
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('button', { name: 'Send a test notification' }).click()
    await page
      .getByRole('alert')
      .filter({ hasText: 'no device of yours gets notifications yet: turn them on' })
      .waitFor()
    await context.close()
  }, 60_000)
  test('setup wizard: the push reaches a real receiver; tapped, it brings the wizard back saying it works', async () => {
    const { context, page, sw, deliver } = await workerPage(web)
    await page.setViewportSize(PHONE)
    await subscribeReceiver(page, receiver, 'wizard-phone')
    await page.goto(`${web.server.url}/setup`)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    // How to install the app on a phone is part of the step.
    await page.getByText('Install on iPhone and iPad (Safari)').waitFor()
    await page.getByText('Install on Android (Chrome)').waitFor()

    const before = receiver.received.length
    await page.getByRole('button', { name: 'Send a test notification' }).click()
    await page.getByText('Sent to your device.', { exact: false }).waitFor()
    const text = await nextPush(receiver, 'wizard-phone', before)
    expect(JSON.parse(text)).toMatchObject({ kind: 'test', url: '/setup?notification=test' })

    // The very payload the server sent, shown by the real service worker, then tapped.
    await deliver(text)
    const shown = await notifications(sw)
    expect(shown).toEqual([
      expect.objectContaining({
        title: 'Hark',
        body: 'Test notification\nNotifications reach this device. Tap to finish the test.',
      }),
    ])
    const tapped = await click(sw, '', '')
    // Focusing the window is the one step only a real tap may do (push-fixture.ts, `click`).
    expect(tapped.settled).toEqual(['InvalidAccessError: Not allowed to focus a window.'])
    await page.waitForURL(`${web.server.url}/setup?notification=test`)
    await page.getByText('It works: the test notification reached this device').waitFor()
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      expect({ scheme, found: await axeViolations(page) }).toEqual({ scheme, found: [] })
      await screenshot(page, `setup-notifications-tapped-phone-${scheme}`)
    }
    await context.close()
  }, 90_000)

  test('Settings: the button, the push at the receiver, and the tap opening Settings', async () => {
    const { context, page, sw, deliver } = await workerPage(web)
    await page.setViewportSize(PHONE)
    await subscribeReceiver(page, receiver, 'settings-phone')
    await page.reload()
    const before = receiver.received.length
    await page.getByRole('button', { name: 'Send a test notification' }).click()
    await page.getByText(/^Sent to your \d devices\./).waitFor()
    const text = await nextPush(receiver, 'settings-phone', before)
    expect(JSON.parse(text)).toMatchObject({
      kind: 'test',
      url: '/settings?notification=test#notifications',
    })
    await deliver(text)
    await click(sw, '', '')
    await page.waitForURL(`${web.server.url}/settings?notification=test#notifications`)
    await page.getByText('It works: the test notification reached this device').waitFor()
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme })
      await page.locator('#notifications').scrollIntoViewIfNeeded()
      expect({ scheme, found: await axeViolations(page) }).toEqual({ scheme, found: [] })
      await screenshot(page, `settings-notifications-phone-${scheme}`)
    }
    await context.close()
  }, 90_000)
})

describe('installing the app, by platform', () => {
  const IPHONE =
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1'
  const ANDROID =
    'Mozilla/5.0 (Linux; Android 15; Pixel 9) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36'

  for (const [platform, userAgent, first] of [
    ['iphone', IPHONE, 'Install on iPhone and iPad (Safari)'],
    ['android', ANDROID, 'Install on Android (Chrome)'],
  ] as const) {
    test(`${platform}: its own steps first and open, in the wizard`, async () => {
      const { page, context } = await web.open({ viewport: PHONE })
      const cdp = await context.newCDPSession(page)
      await cdp.send('Emulation.setUserAgentOverride', { userAgent })
      await page.goto(`${web.server.url}/setup`)
      await page.getByRole('button', { name: 'Continue' }).click()
      const open = page.locator('.install-steps details[open] summary')
      await open.waitFor()
      expect(await open.allTextContents()).toEqual([first])
      expect(await page.locator('.install-steps summary').first().textContent()).toBe(first)
      if (platform === 'iphone') {
        // Safari on iOS has no push in a tab: the step says to install first, not a dead button.
        await page
          .getByText('On iPhone and iPad, notifications work only in the installed app')
          .waitFor()
        expect(
          await page.getByRole('button', { name: 'Turn on notifications on this device' }).count(),
        ).toBe(0)
      }
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme })
        expect({ scheme, found: await axeViolations(page) }).toEqual({ scheme, found: [] })
        await page.locator('.install-steps').scrollIntoViewIfNeeded()
        await screenshot(page, `setup-install-${platform}-${scheme}`)
      }
      await context.close()
    }, 60_000)
  }
})

describe("the browser's push errors in words", () => {
  test('notifications blocked: no "Registration failed - permission denied", but what to do', async () => {
    await web.server.addPerson('blocked@example.com')
    const context = await web.context({
      email: 'blocked@example.com',
      serviceWorkers: true,
      viewport: PHONE,
    })
    await context.clearPermissions()
    const page = await context.newPage()
    await page.goto(`${web.server.url}/settings`)
    await page.getByRole('button', { name: 'Turn on notifications on this device' }).click()
    const alert = page.locator('section[aria-labelledby="notifications"] [role="alert"]')
    await alert.waitFor()
    const said = (await alert.textContent()) ?? ''
    expect(said).not.toContain('Registration failed')
    expect(said).toContain('Notifications are blocked for Hark in this browser. Allow them')
    await context.close()
  }, 60_000)

  test('allowed, but the browser has no push service: the failure says so and what to use', async () => {
    await web.server.addPerson('nopush@example.com')
    const context = await web.context({
      email: 'nopush@example.com',
      serviceWorkers: true,
      viewport: PHONE,
    })
    await context.grantPermissions(['notifications'], { origin: web.server.url })
    const page = await context.newPage()
    await page.goto(`${web.server.url}/settings`)
    await page.getByRole('button', { name: 'Turn on notifications on this device' }).click()
    const listed = page.getByRole('button', { name: /^Test / }).first()
    const alert = page.locator('section[aria-labelledby="notifications"] [role="alert"]')
    await Promise.race([listed.waitFor({ timeout: 20_000 }), alert.waitFor({ timeout: 20_000 })])
    // Headless Chromium has no push service: when it cannot subscribe, the raw error is gone.
    if ((await alert.count()) > 0) {
      const said = (await alert.textContent()) ?? ''
      console.log(`headless Chromium's push failure, as shown: ${said}`)
      expect(said).not.toMatch(/Registration failed|AbortError|DOMException/)
      // Allowed here: not told to allow what is allowed, but why it failed and what to use.
      expect(said).not.toContain('blocked')
      expect(said).toMatch(/Use Chrome, Edge, Firefox or Safari/)
    }
    await context.close()
  }, 60_000)
})
