import { expect } from 'bun:test'
import type { BrowserContext, Page, Worker } from 'playwright-core'
import type { Receiver } from '../push/receiver.ts'
import type { WebTest } from './harness.ts'

/**
 * Notifications in a real Chromium, shared by push.test.ts and push-approval.test.ts: a page
 * controlled by the real service worker, pushes delivered straight to that worker over the
 * DevTools protocol (headless Chromium has no push service), the notifications it shows, and a
 * click on one dispatched in the worker itself (see `click` for the two ways it differs from a
 * click on an OS notification).
 */

export interface Shown {
  title: string
  body: string
  tag: string
  actions: { action: string; title: string }[]
}

/**
 * Waits until the worker is activated: `ready` resolves while it is still activating, and a
 * push delivered then is lost.
 */
export async function activated(page: Page): Promise<void> {
  await page.evaluate(async () => {
    const worker = (await navigator.serviceWorker.ready).active as ServiceWorker
    if (worker.state === 'activated') return
    await new Promise<void>((resolve) => {
      worker.addEventListener('statechange', () => {
        if (worker.state === 'activated') resolve()
      })
    })
  })
}

/** A logged-in page controlled by the service worker, and that worker. */
export async function workerPage(web: WebTest): Promise<{
  context: BrowserContext
  page: Page
  sw: Worker
  deliver(data: string): Promise<void>
}> {
  const context = await web.context({
    serviceWorkers: true,
  })
  await context.grantPermissions(['notifications'], { origin: web.server.url })
  const page = await context.newPage()
  const cdp = await context.newCDPSession(page)
  const registrations: string[] = []
  cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
    for (const r of e.registrations) registrations.push(r.registrationId)
  })
  await cdp.send('ServiceWorker.enable')
  await page.goto(`${web.server.url}/settings`)
  await activated(page)
  const registrationId = registrations.at(-1) as string
  expect(registrationId).toBeDefined()
  const sw = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'))
  return {
    context,
    page,
    sw,
    deliver: async (data) => {
      const before = await sw.evaluate(() => {
        // Counts the worker's finished `showNotification` calls (each still goes through).
        const scope = self as unknown as {
          registration: ServiceWorkerRegistration
          shows?: number
        }
        if (scope.shows === undefined) {
          scope.shows = 0
          const registration = scope.registration
          const show = registration.showNotification
          registration.showNotification = (...args) =>
            show.apply(registration, args).finally(() => {
              scope.shows = (scope.shows ?? 0) + 1
            })
        }
        return scope.shows
      })
      await cdp.send('ServiceWorker.deliverPushMessage', {
        origin: web.server.url,
        registrationId,
        data,
      })
      await sw.evaluate(async (before) => {
        const scope = self as unknown as { shows: number }
        for (let i = 0; i < 100 && scope.shows <= before; i++) {
          await new Promise((r) => setTimeout(r, 50))
        }
      }, before)
    },
  }
}

/**
 * Registers a device for the owner whose endpoint is the local receiver, through the app's own
 * API with the page's session (what the settings card posts after `pushManager.subscribe`).
 */
export async function subscribeReceiver(page: Page, receiver: Receiver, id: string): Promise<void> {
  const sub = receiver.subscription(id)
  const status = await page.evaluate(
    async (body) => {
      const response = await fetch('/v1/app/push/subscriptions', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return response.status
    },
    { endpoint: sub.endpoint, keys: sub.keys, name: id },
  )
  expect(status).toBe(200)
}

/** The decrypted text of the next push to the receiver's device `id`. */
export async function nextPush(receiver: Receiver, id: string, after: number): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const got = receiver.received.slice(after).find((r) => r.subscription === id)
    if (got) return got.text
    await Bun.sleep(10)
  }
  throw new Error(`no push for ${id}`)
}

/**
 * The worker's notifications. Asked only once the worker's `showNotification` has settled
 * (`deliver` waits for it, `click` awaits it): Chromium's `getNotifications` drops from its
 * database a notification shown while the call is running (it is not yet in the displayed set
 * it took), after which that notification is never listed again.
 */
export async function notifications(sw: Worker): Promise<Shown[]> {
  return sw.evaluate(async () => {
    const registration = (self as unknown as { registration: ServiceWorkerRegistration })
      .registration
    return (await registration.getNotifications()).map((n) => {
      const actions = (n as Notification & { actions?: Shown['actions'] }).actions ?? []
      return {
        title: n.title,
        body: n.body,
        tag: n.tag,
        actions: actions.map(({ action, title }) => ({ action, title })),
      }
    })
  })
}

/**
 * A click on the notification tagged `tag` (on `action`, or on its body when ''), dispatched in
 * the real worker to its real `notificationclick` handler. Two things differ from a click on an
 * OS notification, and only these: a script-made event's `waitUntil` throws (Chromium: "Can
 * not call waitUntil on a script constructed ExtendableEvent"), so it is replaced on this one
 * event by a collector the test then awaits, which also proves the handler hands its work to
 * `waitUntil`; and the browser grants no window interaction, so `clients.openWindow` and
 * `WindowClient.focus` reject ("Not allowed to open/focus a window"), returned here as the
 * settled results. `again` clicks the very Notification object of the previous click again.
 */
export async function click(
  sw: Worker,
  tag: string,
  action: string,
  again = false,
): Promise<{ settled: string[]; opened: string[] }> {
  return sw.evaluate(
    async ({ tag, action, again }) => {
      const scope = self as unknown as {
        registration: ServiceWorkerRegistration
        clients: { openWindow(url: string): Promise<unknown> }
        lastClicked?: Notification
        NotificationEvent: new (
          type: string,
          init: { notification: Notification; action: string },
        ) => Event
      }
      const notification = again
        ? (scope.lastClicked as Notification)
        : (await scope.registration.getNotifications({ tag }))[0]
      if (!notification) throw new Error(`no notification tagged ${tag}`)
      scope.lastClicked = notification
      // Which windows the handler asks for (the call still goes to the browser).
      const opened: string[] = []
      const openWindow = scope.clients.openWindow
      scope.clients.openWindow = (url: string) => {
        opened.push(url)
        return openWindow.call(scope.clients, url)
      }
      const event = new scope.NotificationEvent('notificationclick', { notification, action })
      const kept: Promise<unknown>[] = []
      Object.defineProperty(event, 'waitUntil', {
        value: (promise: Promise<unknown>) => kept.push(promise),
      })
      try {
        self.dispatchEvent(event)
        const results = await Promise.allSettled(kept)
        return {
          opened,
          settled: results.map((r) => (r.status === 'fulfilled' ? 'ok' : String(r.reason))),
        }
      } finally {
        delete (scope.clients as { openWindow?: unknown }).openWindow
      }
    },
    { tag, action, again },
  )
}
