import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import type { ChannelRow } from '../../src/channels/store.ts'
import type { MessageRow } from '../../src/messages/store.ts'
import { messagePayload } from '../../src/push/payload.ts'
import { TestClock } from '../harness.ts'
import { DESKTOP, PHONE, screenshot, webTest } from './harness.ts'
import { click, workerPage } from './push-fixture.ts'
import { touchContext } from './touch.ts'

/**
 * Every thread and message has an address (`/c/CHANNEL#MESSAGE`), and every way of arriving at
 * one (a push notification's URL, a reload, a fresh tab, Back and Forward, the "Waiting on you"
 * list) lands on that thread with the message scrolled to and marked, even when it is older
 * than the newest page. The server's clock stands still: every message has the same
 * `created_at`, so the thread's order can only come from the server's.
 */
const web = webTest({ clock: new TestClock() })

const SIZES = [
  ['phone', { ...PHONE, touch: true }],
  ['desktop', { ...DESKTOP, touch: false }],
] as const

/** The URL a push notification for this message carries (what the service worker opens). */
async function pushUrl(channelId: string, messageId: string): Promise<string> {
  const { ctx } = web.server
  return messagePayload(
    (await ctx.store.channels.byId(channelId)) as ChannelRow,
    (await ctx.store.messages.byId(messageId)) as MessageRow,
  ).url
}

async function openAt(viewport: { width: number; height: number; touch: boolean }, path: string) {
  const context = await touchContext(web, viewport)
  const page = await context.newPage()
  await page.goto(`${web.server.url}${path}`)
  return { context, page }
}

/** The message is shown, marked, and inside its scrolled list's visible part. */
async function expectFocused(page: Page, messageId: string) {
  const article = page.locator(`.messages article[data-id="${messageId}"]`)
  await page.locator(`.messages article.focused[data-id="${messageId}"]`).waitFor({
    timeout: 10_000,
  })
  // Let late layout (content-visibility, fonts) settle before measuring.
  await page.waitForTimeout(200)
  const visible = await article.evaluate((el) => {
    const list = el.closest('.messages') as HTMLElement
    const a = el.getBoundingClientRect()
    const l = list.getBoundingClientRect()
    return a.top >= l.top - 1 && a.top < l.bottom - 20 && l.height > 0
      ? true
      : JSON.stringify({
          a: a.top,
          l: [l.top, l.bottom],
          st: list.scrollTop,
          sh: list.scrollHeight,
        })
  })
  expect(visible).toBe(true)
  expect(await article.isVisible()).toBe(true)
  // A visible mark: the outline the .focused rule draws.
  expect(await article.evaluate((el) => getComputedStyle(el).outlineStyle)).toBe('solid')
}

describe('addresses', () => {
  test("a push's URL opens the thread at its message, also beyond the newest page; reload and a fresh tab too", async () => {
    const bot = await web.server.addChannel('Long bot')
    const ids: string[] = []
    for (let i = 1; i <= 130; i++) {
      const { message } = await bot.agent.send({ body: { text: `Old line ${i}` } })
      ids.push(message.id)
    }
    const target = ids[11] as string // 119 newer: three pages back
    const url = await pushUrl(bot.channelId, target)
    expect(url).toBe(`/c/${bot.channelId}#${target}`)
    for (const [name, viewport] of SIZES) {
      const { context, page } = await openAt(viewport, url)
      await expectFocused(page, target)
      // The thread, not the list (the issue: a notification opened the list).
      await page.locator('.thread-head h2', { hasText: 'Long bot' }).waitFor()
      expect(await page.locator('.thread').isVisible()).toBe(true)
      expect(new URL(page.url()).hash).toBe(`#${target}`)
      await screenshot(page, `addresses-push-${name}`)
      await page.reload()
      await expectFocused(page, target)
      const fresh = await context.newPage()
      await fresh.goto(`${web.server.url}${url}`)
      await expectFocused(fresh, target)
      await context.close()
    }
  }, 30_000)

  test('opening a thread changes the location; Back and Forward land on the same thread and message', async () => {
    const bot = await web.server.addChannel('Asking bot')
    await bot.agent.send({ body: { text: 'Before the question' } })
    const { message: ask } = await bot.agent.send({
      body: { title: 'Ship it?', blocks: [{ type: 'confirm', id: 'go', label: 'Ship' }] },
    })
    for (let i = 1; i <= 60; i++) await bot.agent.send({ body: { text: `After ${i}` } })
    for (const [name, viewport] of SIZES) {
      const { context, page } = await openAt(viewport, '/')
      // The list's "Waiting on you" links to the message itself.
      const waiting = page.locator('.open-asks a', { hasText: 'Ship it?' })
      await waiting.click()
      await page.waitForURL((u) => u.pathname === `/c/${bot.channelId}` && u.hash === `#${ask.id}`)
      await expectFocused(page, ask.id)
      await screenshot(page, `addresses-waiting-${name}`)
      // Opening another thread from the list (on a phone: back to the list first).
      if (name === 'phone') await page.locator('.thread-head .back').click()
      await page.locator('.channel', { hasText: 'Build bot' }).click()
      await page.waitForURL((u) => u.pathname === `/c/${web.server.channelId}`)
      await page.locator('.thread-head h2', { hasText: 'Build bot' }).waitFor()
      if (name === 'phone') await page.goBack() // the list
      await page.goBack()
      await page.waitForURL((u) => u.hash === `#${ask.id}`)
      await expectFocused(page, ask.id)
      await page.goBack()
      await page.waitForURL((u) => u.pathname === '/')
      await page.goForward()
      await expectFocused(page, ask.id)
      await context.close()
    }
  }, 30_000)
})

describe('within one thread', () => {
  test('Back to the bare thread drops the mark; Forward scrolls to the message again', async () => {
    const bot = await web.server.addChannel('Same bot')
    const { message: ask } = await bot.agent.send({
      body: { title: 'Merge it?', blocks: [{ type: 'confirm', id: 'go', label: 'Merge' }] },
    })
    for (let i = 1; i <= 30; i++) await bot.agent.send({ body: { text: `Later ${i}` } })
    const { context, page } = await openAt(SIZES[1][1], `/c/${bot.channelId}`)
    await page.locator('.messages').getByText('Later 30', { exact: true }).waitFor()
    await page.locator('.open-asks a', { hasText: 'Merge it?' }).click()
    await expectFocused(page, ask.id)
    await page.goBack()
    await page.waitForURL((u) => u.hash === '')
    await page.locator('.messages article.focused').waitFor({ state: 'detached' })
    await page.locator('.messages').evaluate((el) => {
      el.scrollTop = el.scrollHeight
    })
    await page.goForward()
    await expectFocused(page, ask.id)
    await context.close()
  }, 30_000)

  test('a link to the marked message, followed again, scrolls to it again without a new history entry', async () => {
    const bot = await web.server.addChannel('Again bot')
    const { message: ask } = await bot.agent.send({
      body: { title: 'Deploy it?', blocks: [{ type: 'confirm', id: 'go', label: 'Deploy' }] },
    })
    for (let i = 1; i <= 30; i++) await bot.agent.send({ body: { text: `Since ${i}` } })
    const { context, page } = await openAt(SIZES[1][1], `/c/${bot.channelId}`)
    await page.locator('.messages').getByText('Since 30', { exact: true }).waitFor()
    const link = page.locator('.open-asks a', { hasText: 'Deploy it?' })
    await link.click()
    await expectFocused(page, ask.id)
    const entries = await page.evaluate(() => history.length)
    // Scrolled away to the newest message: the marked one is out of sight (or unmounted).
    await page.locator('.messages').evaluate((el) => {
      el.scrollTop = el.scrollHeight
    })
    await page.waitForFunction((id) => {
      const list = document.querySelector('.messages')?.getBoundingClientRect()
      const article = document.querySelector(`.messages article[data-id="${id}"]`)
      return !list || !article || article.getBoundingClientRect().bottom <= list.top
    }, ask.id)
    // The same address: only the click says where to go.
    await link.click()
    await expectFocused(page, ask.id)
    expect(new URL(page.url()).hash).toBe(`#${ask.id}`)
    expect(await page.evaluate(() => history.length)).toBe(entries)
    await context.close()
  }, 30_000)
})

describe('a notification', () => {
  test("a tap runs the worker's handler: the open app goes to the thread at the message, from the list and from another message", async () => {
    const bot = await web.server.addChannel('Pushing bot')
    const { message: first } = await bot.agent.send({ body: { text: 'First push' } })
    for (let i = 1; i <= 70; i++) await bot.agent.send({ body: { text: `Filler ${i}` } })
    const { message: second } = await bot.agent.send({ body: { text: 'Second push' } })
    const { context, page, sw, deliver } = await workerPage(web)
    await page.setViewportSize(PHONE)
    await page.goto(`${web.server.url}/`)
    await page.locator('.channel', { hasText: 'Pushing bot' }).waitFor()
    const { ctx } = web.server
    const channel = (await ctx.store.channels.byId(bot.channelId)) as ChannelRow
    for (const m of [first, second]) {
      // The payload the server pushes (without a capability: no answer buttons needed here).
      const payload = messagePayload(channel, (await ctx.store.messages.byId(m.id)) as MessageRow)
      await deliver(JSON.stringify(payload))
      // Focusing the window is the one step a script-made click may not take (push.test.ts).
      const { settled } = await click(sw, m.id, '')
      expect(settled).toEqual(['InvalidAccessError: Not allowed to focus a window.'])
      await page.waitForURL(`${web.server.url}${payload.url}`)
      await expectFocused(page, m.id)
      expect(await page.locator('.thread').isVisible()).toBe(true)
      await screenshot(page, `addresses-notification-${m === first ? 'list' : 'thread'}-phone`)
    }
    await context.close()
  }, 60_000)
})

describe('order', () => {
  test('40 quick sends show in the order they were sent, live and after a reload', async () => {
    const bot = await web.server.addChannel('Quick bot')
    await bot.agent.send({ body: { text: 'Start' } })
    const { context, page } = await openAt(SIZES[0][1], `/c/${bot.channelId}`)
    await page.locator('.messages').getByText('Start', { exact: true }).waitFor()
    const sent: string[] = []
    for (let i = 1; i <= 40; i++) {
      const { message } = await bot.agent.send({ body: { text: `Quick ${i}` } })
      sent.push(message.id)
    }
    const order = () =>
      page
        .locator('.messages article[data-id]')
        .evaluateAll((els) => els.map((el) => el.getAttribute('data-id') ?? ''))
    await page.locator('.messages').getByText('Quick 40', { exact: true }).waitFor()
    expect((await order()).slice(1)).toEqual(sent)
    await page.reload()
    await page.locator('.messages').getByText('Quick 40', { exact: true }).waitFor()
    expect((await order()).slice(1)).toEqual(sent)
    await screenshot(page, 'order-phone')
    await context.close()
  }, 30_000)
})
