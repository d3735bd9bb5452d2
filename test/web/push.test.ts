import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import {
  launchBrowser,
  loggedInContext,
  type Provisioned,
  provision,
  startWebServer,
  type WebServer,
} from './harness.ts'

/**
 * Notifications in a real Chromium. Headless Chromium has no push service to subscribe with,
 * so `pushManager.subscribe` is driven as far as it goes (permission, service worker, the
 * VAPID key) and its failure must reach the person as a message; the worker's push handling is
 * then tested by delivering a push straight to it over the DevTools protocol.
 */
let chrome: { browser: Browser; close(): Promise<void> }
let server: WebServer
let p: Provisioned

beforeAll(async () => {
  chrome = await launchBrowser()
  server = await startWebServer()
  p = provision(server)
})

afterAll(async () => {
  await chrome?.close()
  await server?.stop()
})

describe('notifications in the browser', () => {
  test('settings shows the Notifications card; turning it on reaches pushManager.subscribe', async () => {
    const context = await loggedInContext(chrome.browser, server, p.owner, {
      serviceWorkers: true,
    })
    await context.grantPermissions(['notifications'], { origin: server.url })
    const page = await context.newPage()
    await page.goto(`${server.url}/settings`)
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    await page.getByText('No device gets notifications yet.').waitFor()
    await page.getByRole('button', { name: 'Turn on notifications on this device' }).click()
    // Either Chromium subscribed (a push service was reachable) and the device is listed, or
    // subscribe failed and the card says why; never a silent nothing.
    const listed = page.getByRole('button', { name: /^Test / })
    const failed = page.locator('section[aria-labelledby="notifications"] [role="alert"]')
    await Promise.race([listed.waitFor({ timeout: 20_000 }), failed.waitFor({ timeout: 20_000 })])
    const subscribed = await listed.count()
    if (!subscribed) {
      console.log(`headless Chromium could not subscribe: ${await failed.first().textContent()}`)
    }
    await context.close()
  }, 60_000)

  test('the service worker shows a pushed message, with answer buttons for a simple question', async () => {
    const context = await loggedInContext(chrome.browser, server, p.owner, {
      serviceWorkers: true,
    })
    await context.grantPermissions(['notifications'], { origin: server.url })
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    const registrations: string[] = []
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
      for (const r of e.registrations) registrations.push(r.registrationId)
    })
    await cdp.send('ServiceWorker.enable')
    await page.goto(`${server.url}/settings`)
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready
    })
    const registrationId = registrations.at(-1) as string
    expect(registrationId).toBeDefined()
    const payload = {
      kind: 'message',
      channel_id: p.channelId,
      channel_label: 'Build bot',
      message_id: 'msg_test',
      title: 'Deploy?',
      text: 'Release 1.2 is ready',
      url: `/c/${p.channelId}#msg_test`,
      actions: [
        { action: 'a0', title: 'Ship it', answer: 'yes' },
        { action: 'a1', title: 'No', answer: 'no' },
      ],
      capability: 'hark_cap_x',
    }
    await cdp.send('ServiceWorker.deliverPushMessage', {
      origin: server.url,
      registrationId,
      data: JSON.stringify(payload),
    })
    const shown = await page.evaluate(async () => {
      const registration = await navigator.serviceWorker.ready
      for (let i = 0; i < 100; i++) {
        const list = await registration.getNotifications()
        if (list.length > 0) {
          const n = list[0] as Notification & { actions?: { action: string; title: string }[] }
          return { title: n.title, body: n.body, tag: n.tag, actions: n.actions ?? [] }
        }
        await new Promise((r) => setTimeout(r, 50))
      }
      return null
    })
    expect(shown).toEqual({
      title: 'Build bot',
      body: 'Deploy?\nRelease 1.2 is ready',
      tag: 'msg_test',
      actions: [
        { action: 'a0', title: 'Ship it' },
        { action: 'a1', title: 'No' },
      ].map((a) => expect.objectContaining(a)),
    })
    await context.close()
  }, 60_000)
})
