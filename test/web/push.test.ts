import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type Receiver, startReceiver } from '../push/receiver.ts'
import { webTest } from './harness.ts'
import { click, nextPush, notifications, subscribeReceiver, workerPage } from './push-fixture.ts'

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
    const { context, sw, deliver } = await workerPage(web)
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
    const { context, sw, deliver } = await workerPage(web)
    const payload = {
      kind: 'message',
      channel_id: web.server.channelId,
      channel_label: 'Build bot',
      message_id: 'msg_danger',
      title: 'Claude Code wants to run a command',
      text: 'rm -rf /srv/data',
      url: `/c/${web.server.channelId}#msg_danger`,
      actions: [
        {
          action: 'allow',
          title: 'Allow…',
          url: `/c/${web.server.channelId}?act=allow#msg_danger`,
        },
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
        expect.objectContaining({ action: 'allow', title: 'Allow…' }),
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
    const { context, page, sw, deliver } = await workerPage(web)
    const answers: number[] = []
    context.on('response', (r) => {
      if (new URL(r.url()).pathname === '/v1/push/answer') answers.push(r.status())
    })
    await subscribeReceiver(page, receiver, 'answering')
    const before = receiver.received.length
    const { message } = await web.server.agent.send({
      body: {
        text: 'Release 1.2 is ready',
        blocks: [{ type: 'confirm', id: 'go', label: 'Deploy now' }],
      },
    } as never)
    const text = await nextPush(receiver, 'answering', before)
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
    const { context, page, sw, deliver } = await workerPage(web)
    await subscribeReceiver(page, receiver, 'opening')
    const before = receiver.received.length
    const { message } = await web.server.agent.send({ body: { text: 'Build finished' } } as never)
    await deliver(await nextPush(receiver, 'opening', before))
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
    await deliver(await nextPush(receiver, 'opening', before))
    await page.close()
    expect(await click(sw, message.id, '')).toEqual({
      settled: ['InvalidAccessError: Not allowed to open a window.'],
      opened: [target],
    })
    await context.close()
  }, 60_000)
})
