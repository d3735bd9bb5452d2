import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { TestClock } from '../harness.ts'
import { DESKTOP, PHONE, screenshot, watchErrors, webTest } from './harness.ts'
import { touchContext } from './touch.ts'

/**
 * The app's one search box (issue 18): typing searches the person's messages across their
 * agents; each result shows the agent, the time and the words around the match, marked; a
 * result opens its message in its thread, scrolled to and marked, even when it is older than
 * the thread's newest page; Back on a phone comes back to the same results.
 */
const web = webTest({ clock: new TestClock() })

const SIZES = [
  ['phone', { ...PHONE, touch: true }],
  ['desktop', { ...DESKTOP, touch: false }],
] as const

async function openAt(viewport: { width: number; height: number; touch: boolean }) {
  const context = await touchContext(web, viewport)
  const page = await context.newPage()
  const errors = watchErrors(page)
  await page.goto(`${web.server.url}/`)
  return { context, page, errors }
}

async function expectFocused(page: Page, messageId: string) {
  const article = page.locator(`.messages article.focused[data-id="${messageId}"]`)
  await article.waitFor({ timeout: 10_000 })
  await page.waitForTimeout(200) // late layout settles before measuring
  expect(await article.isVisible()).toBe(true)
  expect(await article.evaluate((el) => getComputedStyle(el).outlineStyle)).toBe('solid')
}

describe('search', () => {
  test('typing finds the message; the result opens it in its thread, marked', async () => {
    const bot = await web.server.addChannel('Deploy bot')
    const { message: target } = await bot.agent.send({
      body: {
        title: 'Rollout',
        blocks: [{ type: 'markdown', text: 'The **gazpacho** migration finished on all hosts' }],
      },
    })
    // Newer than a page: the thread has to go back for it.
    for (let i = 1; i <= 70; i++) await bot.agent.send({ body: { text: `Later line ${i}` } })
    // Markup in a message is text in a snippet, never HTML.
    await web.server.agent.send({ body: { text: 'gazpacho <img src=x onerror=alert(1)> soup' } })

    for (const [name, viewport] of SIZES) {
      const { context, page, errors } = await openAt(viewport)
      const box = page.getByRole('searchbox', { name: 'Search messages' })
      await box.click()
      await box.pressSequentially('gazp', { delay: 20 }) // a prefix, while typing
      const hit = page.locator(`.search-hit[data-message="${target.id}"]`)
      await hit.waitFor()
      expect(await page.locator('.search-hit').count()).toBe(2)
      expect(await hit.locator('.channel-label').textContent()).toBe('Deploy bot')
      expect(await hit.locator('time').count()).toBe(1)
      expect(await hit.locator('mark').allTextContents()).toEqual(['gazpacho'])
      expect(await hit.locator('.search-snippet').textContent()).toContain('migration finished')
      // The other hit's tag stays text: no <img> was made.
      const other = page.locator('.search-hit', { hasText: 'Build bot' })
      expect(await other.locator('.search-snippet').textContent()).toContain('<img src=x')
      expect(await page.locator('.search-results img').count()).toBe(0)
      // The channel list waits hidden while results show.
      expect(await page.locator('.sidebar-list').isHidden()).toBe(true)
      await screenshot(page, `search-results-${name}`)

      await hit.click()
      await page.waitForURL(
        (u) => u.pathname === `/c/${bot.channelId}` && u.hash === `#${target.id}`,
      )
      await expectFocused(page, target.id)
      await page.locator('.thread-head h2', { hasText: 'Deploy bot' }).waitFor()
      await screenshot(page, `search-opened-${name}`)

      if (name === 'phone') {
        // Back to the list: the same query and results.
        await page.goBack()
        await page.waitForURL((u) => u.pathname === '/')
        expect(await box.inputValue()).toBe('gazp')
        await hit.waitFor()
      }
      // Clearing the box brings the agents back.
      await box.fill('')
      await page.locator('.sidebar-list .channel', { hasText: 'Deploy bot' }).waitFor()
      expect(await page.locator('.search-results').count()).toBe(0)
      // Nothing found says so.
      await box.fill('nosuchwordanywhere')
      await page.getByRole('status').filter({ hasText: 'No messages match.' }).waitFor()
      expect(errors).toEqual([])
      await context.close()
    }
  }, 60_000)

  test('More results pages on; Escape clears the box', async () => {
    const bot = await web.server.addChannel('Chatty bot')
    for (let i = 1; i <= 23; i++) await bot.agent.send({ body: { text: `quokka sighting ${i}` } })
    const { context, page, errors } = await openAt({ ...DESKTOP, touch: false })
    const box = page.getByRole('searchbox', { name: 'Search messages' })
    await box.fill('quokka')
    await page.getByRole('status').filter({ hasText: '20+ messages' }).waitFor()
    expect(await page.locator('.search-hit').count()).toBe(20)
    await page.getByRole('button', { name: 'More results' }).click()
    await page.getByRole('status').filter({ hasText: '23 messages' }).waitFor()
    expect(await page.locator('.search-hit').count()).toBe(23)
    expect(await page.getByRole('button', { name: 'More results' }).count()).toBe(0)
    await box.press('Escape')
    await page.locator('.sidebar-list .channel', { hasText: 'Chatty bot' }).waitFor()
    expect(await box.inputValue()).toBe('')
    expect(errors).toEqual([])
    await context.close()
  }, 30_000)
})
