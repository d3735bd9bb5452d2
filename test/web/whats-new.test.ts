import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { markChannelRead } from '../../src/channels/service.ts'
import type { ChannelRow } from '../../src/channels/store.ts'
import { DESKTOP, PHONE, screenshot, webTest } from './harness.ts'
import { touchContext } from './touch.ts'

/**
 * What is new, at a glance: unread counts in the list (up on a message, down on opening), the
 * "New messages" divider above the first message since the thread was last read, the open
 * questions in the title and the installed app's badge, and "Waiting on you" across agents.
 */
const web = webTest()

const SIZES = [
  ['phone', { ...PHONE, touch: true }],
  ['desktop', { ...DESKTOP, touch: false }],
] as const

/** Records the app's calls to the Badging API, which headless Chromium may not have. */
declare global {
  interface Window {
    badgeCalls: (number | 'clear')[]
  }
}
function stubBadge() {
  window.badgeCalls = []
  Object.assign(navigator, {
    setAppBadge: (n: number) => {
      window.badgeCalls.push(n)
      return Promise.resolve()
    },
    clearAppBadge: () => {
      window.badgeCalls.push('clear')
      return Promise.resolve()
    },
  })
}

async function openAt(viewport: { width: number; height: number; touch: boolean }, path: string) {
  const context = await touchContext(web, viewport)
  await context.addInitScript(stubBadge)
  const page = await context.newPage()
  await page.goto(`${web.server.url}${path}`)
  return { context, page }
}

const markRead = async (channelId: string) =>
  await markChannelRead(
    web.server.ctx,
    (await web.server.ctx.store.channels.byId(channelId)) as ChannelRow,
  )

const unreadOf = (page: Page, label: string) =>
  page.locator('.channel', { hasText: label }).locator('.badge.count')

describe('what is new', () => {
  test('the unread count goes up on a message and down on opening the thread', async () => {
    for (const [name, viewport] of SIZES) {
      const bot = await web.server.addChannel(`Counting bot ${name}`)
      const { context, page } = await openAt(viewport, '/')
      const row = page.locator('.channel', { hasText: `Counting bot ${name}` })
      await row.waitFor()
      expect(await unreadOf(page, `Counting bot ${name}`).count()).toBe(0)
      await bot.agent.send({ body: { text: 'One' } })
      await unreadOf(page, `Counting bot ${name}`)
        .getByText('1', { exact: false })
        .waitFor({ timeout: 2000 })
      await bot.agent.send({ body: { text: 'Two' } })
      await page.waitForFunction(
        (label) =>
          [...document.querySelectorAll('.channel')]
            .find((el) => el.textContent?.includes(label))
            ?.querySelector('.badge.count')
            ?.textContent?.startsWith('2'),
        `Counting bot ${name}`,
      )
      await screenshot(page, `whats-new-unread-${name}`)
      await row.click()
      await page.locator('.thread-head h2', { hasText: `Counting bot ${name}` }).waitFor()
      await page.locator('.messages').getByText('Two').waitFor()
      if (name === 'phone') {
        await page.waitForTimeout(500) // read: the mark goes 300 ms after the thread shows
        await page.locator('.thread-head .back').click()
      }
      await unreadOf(page, `Counting bot ${name}`).waitFor({ state: 'detached' })
      await context.close()
    }
  }, 30_000)

  test('"New messages" sits above the first message since the thread was last read', async () => {
    for (const [name, viewport] of SIZES) {
      const bot = await web.server.addChannel(`Divider bot ${name}`)
      for (let i = 1; i <= 4; i++) await bot.agent.send({ body: { text: `Read ${i}` } })
      await markRead(bot.channelId)
      // The person's own reply is not unread; the agent's answers after it are.
      await web.server.person.send(bot.channelId, { text: 'My reply' })
      const fresh: string[] = []
      for (let i = 1; i <= 3; i++) {
        fresh.push((await bot.agent.send({ body: { text: `New ${i}` } })).message.id)
      }
      const { context, page } = await openAt(viewport, `/c/${bot.channelId}`)
      const divider = page.locator('.messages .new-divider')
      await divider.waitFor()
      expect(await divider.textContent()).toBe('New messages')
      const next = () =>
        divider.evaluate((el) => el.nextElementSibling?.getAttribute('data-id') ?? null)
      expect(await next()).toBe(fresh[0] as string)
      expect(await page.locator('.messages .new-divider').count()).toBe(1)
      // What arrives while the thread is open is read there: the divider stays.
      await bot.agent.send({ body: { text: 'While reading' } })
      await page.locator('.messages').getByText('While reading').waitFor()
      expect(await next()).toBe(fresh[0] as string)
      await screenshot(page, `whats-new-divider-${name}`)
      // Opened again, everything was read: no divider.
      await page.waitForTimeout(500) // the read mark goes 300 ms after the last change
      await page.reload()
      await page.locator('.messages').getByText('While reading').waitFor()
      expect(await page.locator('.messages .new-divider').count()).toBe(0)
      await context.close()
    }
  }, 30_000)

  test('a thread left open in a hidden tab: what arrives stays unread, then is marked new and read on coming back', async () => {
    const bot = await web.server.addChannel('Background bot')
    await bot.agent.send({ body: { text: 'Seen before' } })
    await markRead(bot.channelId)
    const { context, page } = await openAt(SIZES[1][1], `/c/${bot.channelId}`)
    await page.locator('.messages').getByText('Seen before').waitFor()
    await page.waitForTimeout(500) // read
    const setVisibility = (state: 'hidden' | 'visible') =>
      page.evaluate((state) => {
        Object.defineProperty(document, 'visibilityState', {
          configurable: true,
          get: () => state,
        })
        document.dispatchEvent(new Event('visibilitychange'))
      }, state)
    await setVisibility('hidden')
    const { message: arrived } = await bot.agent.send({ body: { text: 'While away 1' } })
    await bot.agent.send({ body: { text: 'While away 2' } })
    await page.locator('.messages').getByText('While away 2').waitFor()
    await page.waitForTimeout(500)
    await unreadOf(page, 'Background bot').getByText('2').waitFor()
    expect(await page.locator('.messages .new-divider').count()).toBe(0)
    await setVisibility('visible')
    await unreadOf(page, 'Background bot').waitFor({ state: 'detached' })
    const divider = page.locator('.messages .new-divider')
    await divider.waitFor()
    expect(
      await divider.evaluate((el) => el.nextElementSibling?.getAttribute('data-id') ?? null),
    ).toBe(arrived.id)
    await context.close()
  }, 30_000)

  test('many unread: the thread opens at the divider, not at the end', async () => {
    const bot = await web.server.addChannel('Chatty bot')
    await bot.agent.send({ body: { text: 'Old news' } })
    await markRead(bot.channelId)
    for (let i = 1; i <= 30; i++) await bot.agent.send({ body: { text: `Unread ${i}` } })
    const { context, page } = await openAt(SIZES[0][1], `/c/${bot.channelId}`)
    const divider = page.locator('.messages .new-divider')
    await divider.waitFor()
    await page.waitForTimeout(300)
    const top = await divider.evaluate((el) => {
      const list = el.closest('.messages') as HTMLElement
      return el.getBoundingClientRect().top - list.getBoundingClientRect().top
    })
    expect(top).toBeGreaterThanOrEqual(0)
    expect(top).toBeLessThan(100)
    await screenshot(page, 'whats-new-divider-many-phone')
    await context.close()
  }, 30_000)

  test("the title and the app's badge count open questions; Waiting on you lists them oldest first", async () => {
    const a = await web.server.addChannel('Asker A')
    const b = await web.server.addChannel('Asker B')
    const ask = async (agent: typeof a.agent, title: string) =>
      (
        await agent.send({
          body: { title, blocks: [{ type: 'confirm', id: 'ok', label: 'OK' }] },
        })
      ).message.id
    for (const [name, viewport] of SIZES) {
      const { context, page } = await openAt(viewport, '/')
      await page.locator('.channel', { hasText: 'Asker A' }).waitFor()
      const first = await ask(a.agent, `First ${name}`)
      await ask(b.agent, `Second ${name}`)
      await ask(a.agent, `Third ${name}`)
      await page.waitForFunction(() => document.title === '(3) Hark')
      expect(await page.evaluate(() => window.badgeCalls.at(-1))).toBe(3)
      // The list of open questions comes with its own read: waited for, not sampled once.
      const waiting = page.locator('.open-asks')
      await waiting.getByText(`Third ${name}`).waitFor()
      expect(await waiting.locator('.open-ask-title').allTextContents()).toEqual([
        `First ${name}`,
        `Second ${name}`,
        `Third ${name}`,
      ])
      // Reachable without scrolling: on top of the list, in the first screen.
      const box = await waiting.boundingBox()
      expect(box && box.y + 40 < viewport.height).toBe(true)
      await screenshot(page, `whats-new-waiting-${name}`)
      await web.server.person.answer(first, true)
      await page.waitForFunction(() => document.title === '(2) Hark')
      for (const m of (await web.server.person.openAsks()).asks) {
        const agent = m.channel_id === a.channelId ? a.agent : b.agent
        await agent.cancel(m.id)
      }
      await page.waitForFunction(() => document.title === 'Hark')
      expect(await page.evaluate(() => window.badgeCalls.at(-1))).toBe('clear')
      await waiting.waitFor({ state: 'detached' }) // read again after the counts changed
      await context.close()
    }
  }, 30_000)
})
