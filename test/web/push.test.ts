import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page, Worker } from 'playwright-core'
import { type Receiver, startReceiver } from '../push/receiver.ts'
import { webTest } from './harness.ts'

/**
 * Notifications in a real Chromium. Headless Chromium has no push service to subscribe with,
 * so `pushManager.subscribe` is driven as far as it goes (permission, service worker, the
 * VAPID key) and its failure must reach the person as a message; the worker's push handling is
 * then tested by delivering a push straight to it over the DevTools protocol.
 *
 * Answering from a notification: the push is one the server really sent (encrypted to a
 * subscription whose endpoint is a local receiver, which decrypts it as a browser would), that
 * exact payload is delivered to the worker, and the click is a `NotificationEvent` dispatched
 * in the worker itself. What only a real click on an OS notification gives (see `click`) is
 * not tested here: docs/decisions.md, "Web push".
 */
const web = webTest({ pushAllowHosts: ['127.0.0.1'] })
let receiver: Receiver

beforeAll(async () => {
  receiver = startReceiver()
})

afterAll(async () => {
  receiver?.close()
})

interface Shown {
  title: string
  body: string
  tag: string
  actions: { action: string; title: string }[]
}

/**
 * Waits until the worker is activated: `ready` resolves while it is still activating, and a
 * push delivered then is lost.
 */
async function activated(page: Page): Promise<void> {
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
async function workerPage(): Promise<{
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
async function subscribeReceiver(page: Page, id: string): Promise<void> {
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
async function nextPush(id: string, after: number): Promise<string> {
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
async function notifications(sw: Worker): Promise<Shown[]> {
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
async function click(
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

describe('notifications in the browser', () => {
  test('settings shows the Notifications card; turning it on reaches pushManager.subscribe', async () => {
    const context = await web.context({
      serviceWorkers: true,
    })
    await context.grantPermissions(['notifications'], { origin: web.server.url })
    const page = await context.newPage()
    await page.goto(`${web.server.url}/settings`)
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
    const { context, sw, deliver } = await workerPage()
    const payload = {
      kind: 'message',
      channel_id: web.server.channelId,
      channel_label: 'Build bot',
      message_id: 'msg_test',
      title: 'Deploy?',
      text: 'Release 1.2 is ready',
      url: `/c/${web.server.channelId}#msg_test`,
      actions: [
        { action: 'a0', title: 'Ship it', answer: 'yes' },
        { action: 'a1', title: 'No', answer: 'no' },
      ],
      capability: 'hark_cap_x',
    }
    await deliver(JSON.stringify(payload))
    const [shown] = await notifications(sw)
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

  test('a destructive approval stands out: marked title, kept on screen, Allow and Deny', async () => {
    const { context, sw, deliver } = await workerPage()
    const payload = {
      kind: 'message',
      channel_id: web.server.channelId,
      channel_label: 'Build bot',
      message_id: 'msg_danger',
      title: 'Claude Code wants to run a command',
      text: 'rm -rf /srv/data',
      url: `/c/${web.server.channelId}#msg_danger`,
      actions: [
        { action: 'allow', title: 'Allow', answer: { decision: 'allow' } },
        { action: 'deny', title: 'Deny', answer: { decision: 'deny' } },
      ],
      capability: 'hark_cap_x',
      danger: true,
    }
    await deliver(JSON.stringify(payload))
    const [shown] = await notifications(sw)
    expect(shown).toMatchObject({
      title: '⚠ Build bot',
      body: 'Claude Code wants to run a command\nrm -rf /srv/data',
      actions: [
        expect.objectContaining({ action: 'allow', title: 'Allow' }),
        expect.objectContaining({ action: 'deny', title: 'Deny' }),
      ],
    })
    const kept = await sw.evaluate(async () => {
      const scope = self as unknown as { registration: ServiceWorkerRegistration }
      const [n] = await scope.registration.getNotifications({ tag: 'msg_danger' })
      return n?.requireInteraction
    })
    expect(kept).toBe(true)
    await context.close()
  }, 60_000)

  test('a click on an action answers the real question once; a replay is refused', async () => {
    const { context, page, sw, deliver } = await workerPage()
    const answers: number[] = []
    context.on('response', (r) => {
      if (new URL(r.url()).pathname === '/v1/push/answer') answers.push(r.status())
    })
    await subscribeReceiver(page, 'answering')
    const before = receiver.received.length
    const { message } = await web.server.agent.send({
      body: {
        text: 'Release 1.2 is ready',
        blocks: [{ type: 'confirm', id: 'go', label: 'Deploy now' }],
      },
    } as never)
    const text = await nextPush('answering', before)
    const payload = JSON.parse(text) as { actions: unknown[]; capability: string; url: string }
    expect(payload.actions).toEqual([{ action: 'a0', title: 'Deploy now', answer: true }])
    expect(payload.capability).toMatch(/^hark_cap_/)

    await deliver(text)
    expect(await notifications(sw)).toEqual([
      {
        title: 'Build bot',
        body: 'Release 1.2 is ready',
        tag: message.id,
        actions: [{ action: 'a0', title: 'Deploy now' }],
      },
    ])

    // The click: the worker posts the capability, and the outcome replaces the notification.
    expect(await click(sw, message.id, 'a0')).toEqual({ settled: ['ok'], opened: [] })
    expect(answers).toEqual([200])
    const answered = await web.server.agent.ask(message.id)
    expect(answered).toMatchObject({ answer: true, message: { ask: { status: 'answered' } } })
    expect(await notifications(sw)).toEqual([
      { title: 'Build bot', body: 'Answered: Deploy now', tag: message.id, actions: [] },
    ])

    // The same click again, with the same capability: refused, and the worker says so.
    expect(await click(sw, message.id, 'a0', true)).toEqual({ settled: ['ok'], opened: [] })
    expect(answers).toEqual([200, 403])
    expect(await web.server.agent.ask(message.id)).toEqual(answered)
    const [refused] = await notifications(sw)
    expect(refused?.tag).toBe(message.id)
    expect(refused?.body).toMatch(/already used or has expired/)
    expect(refused?.actions).toEqual([])
    await context.close()
  }, 60_000)

  test('a click on the notification itself opens the message in the app', async () => {
    const { context, page, sw, deliver } = await workerPage()
    await subscribeReceiver(page, 'opening')
    const before = receiver.received.length
    const { message } = await web.server.agent.send({ body: { text: 'Build finished' } } as never)
    await deliver(await nextPush('opening', before))
    expect((await notifications(sw))[0]?.tag).toBe(message.id)
    const target = `${web.server.url}/c/${web.server.channelId}#${message.id}`

    // The app is open in a tab: that tab is taken to the message. Focusing it is the one
    // step only a real click allows.
    const focusRefused = 'InvalidAccessError: Not allowed to focus a window.'
    expect(await click(sw, message.id, '')).toEqual({ settled: [focusRefused], opened: [] })
    await page.waitForURL(target)
    // The click closed the notification.
    expect(
      await sw.evaluate(
        async () =>
          (
            await (
              self as unknown as { registration: ServiceWorkerRegistration }
            ).registration.getNotifications()
          ).length,
      ),
    ).toBe(0)

    // No window of the app: the worker asks the browser to open one on the message, which a
    // synthetic click is not allowed to do.
    await deliver(await nextPush('opening', before))
    await page.close()
    expect(await click(sw, message.id, '')).toEqual({
      settled: ['InvalidAccessError: Not allowed to open a window.'],
      opened: [target],
    })
    await context.close()
  }, 60_000)
})
