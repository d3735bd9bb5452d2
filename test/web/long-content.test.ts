import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { DESKTOP, PHONE, screenshot, webTest } from './harness.ts'
import { touchContext } from './touch.ts'

/**
 * Long content (issue 18): long code, logs, tables and markdown are cut with a fade and a
 * "Show more" button (never short ones), every code block has a copy button, and wide tables
 * scroll in their own box, never widening the page; at phone and desktop size, light and dark.
 */
const web = webTest()

const SIZES = [
  ['phone', { ...PHONE, touch: true }],
  ['desktop', { ...DESKTOP, touch: false }],
] as const

const LOG = Array.from(
  { length: 60 },
  (_, i) => `12:00:${String(i).padStart(2, '0')} step ${i + 1} ok`,
).join('\n')
const SHORT = 'npm test\nnpm run build'
const WIDE_COLUMNS = Array.from({ length: 12 }, (_, i) => `Column number ${i + 1}`)
const WIDE_ROWS = Array.from({ length: 40 }, (_, r) => WIDE_COLUMNS.map((_, c) => `cell ${r}-${c}`))
const LONG_MD = Array.from({ length: 30 }, (_, i) => `Paragraph ${i + 1} of a long report.`).join(
  '\n\n',
)
const FENCE = 'sudo systemctl restart hark'
const MD_WITH_CODE = `Run this:\n\n\`\`\`sh\n${FENCE}\n\`\`\`\n\n| a | b |\n|---|---|\n| ${'x'.repeat(120)} | y |`

async function sendLong() {
  const { agent, channelId } = await web.server.addChannel('Long content bot')
  const { message } = await agent.send({
    body: {
      title: 'Long content',
      blocks: [
        { type: 'code', language: 'text', code: LOG },
        { type: 'code', language: 'sh', code: SHORT },
        { type: 'table', columns: WIDE_COLUMNS, rows: WIDE_ROWS },
        { type: 'markdown', text: LONG_MD },
        { type: 'markdown', text: MD_WITH_CODE },
      ],
    },
  })
  return { channelId, id: message.id }
}

async function open(
  viewport: { width: number; height: number; touch: boolean },
  scheme: 'light' | 'dark',
  channelId: string,
) {
  const context = await touchContext(web, viewport)
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: web.server.url })
  const page = await context.newPage()
  await page.emulateMedia({ colorScheme: scheme })
  await page.goto(`${web.server.url}/c/${channelId}`)
  await page.locator('.b-code pre').first().waitFor()
  return { context, page }
}

const box = (page: Page, selector: string) =>
  page.locator(selector).evaluate((el) => ({
    height: el.getBoundingClientRect().height,
    width: el.getBoundingClientRect().width,
    scrollHeight: el.scrollHeight,
    scrollWidth: el.scrollWidth,
    clientWidth: el.clientWidth,
    mask: getComputedStyle(el).maskImage,
  }))

const pageFits = (page: Page) =>
  page.evaluate(() => {
    const root = document.scrollingElement as Element
    return root.scrollWidth <= root.clientWidth
  })

describe('long content', () => {
  test('long code, tables and markdown are cut with a fade and Show more; short code is not', async () => {
    const { channelId, id } = await sendLong()
    for (const [name, viewport] of SIZES) {
      for (const scheme of ['light', 'dark'] as const) {
        const { context, page } = await open(viewport, scheme, channelId)
        const m = `article[data-id="${id}"]`
        const logPre = page.locator(`${m} .b-code`).nth(0).locator('pre')
        const logMore = page.locator(`${m} .b-code`).nth(0).locator('button.more')
        await logMore.waitFor()
        const cut = await logPre.evaluate((el) => ({
          height: el.getBoundingClientRect().height,
          scrollHeight: el.scrollHeight,
          mask: getComputedStyle(el).maskImage,
          id: el.id,
        }))
        expect(cut.height).toBeLessThanOrEqual(353)
        expect(cut.height).toBeGreaterThan(250)
        expect(cut.scrollHeight).toBeGreaterThan(800)
        expect(cut.mask).toContain('linear-gradient') // the fade
        expect(await logMore.getAttribute('aria-expanded')).toBe('false')
        expect(await logMore.getAttribute('aria-controls')).toBe(cut.id)
        expect(await logMore.textContent()).toBe('Show more')
        // The short code block is whole: no button, no cut.
        const short = page.locator(`${m} .b-code`).nth(1)
        expect(await short.locator('button.more').count()).toBe(0)
        expect(await short.locator('pre').getAttribute('class')).toBeNull()
        // The long table and the long markdown are cut too; the short markdown is not.
        expect(await page.locator(`${m} .b-table`).getAttribute('class')).toContain('collapsed')
        expect((await box(page, `${m} .b-table`)).height).toBeLessThanOrEqual(353)
        expect(await page.locator(`${m} .markdown`).nth(0).getAttribute('class')).toContain(
          'collapsed',
        )
        expect(await page.locator(`${m} .md-block`).nth(1).locator('button.more').count()).toBe(0)
        expect(await pageFits(page)).toBe(true)
        await page.locator(`${m} .b-code`).nth(0).scrollIntoViewIfNeeded()
        await screenshot(page, `long-content-${name}-${scheme}`)

        // Show more, then Show less (a tap on the phone, a click on the desktop).
        if (viewport.touch) await logMore.tap()
        else await logMore.click()
        expect(await logMore.getAttribute('aria-expanded')).toBe('true')
        expect(await logMore.textContent()).toBe('Show less')
        const whole = await logPre.evaluate((el) => el.getBoundingClientRect().height)
        expect(whole).toBeGreaterThan(800)
        expect(await logPre.evaluate((el) => getComputedStyle(el).maskImage)).toBe('none')
        await screenshot(page, `long-content-${name}-${scheme}-open`)
        await logMore.click()
        expect(await logMore.getAttribute('aria-expanded')).toBe('false')
        expect(await logPre.evaluate((el) => el.getBoundingClientRect().height)).toBeLessThan(353)
        await context.close()
      }
    }
  })

  test('Show more works from the keyboard: Tab to it, Enter, Space', async () => {
    const { channelId, id } = await sendLong()
    const { context, page } = await open(SIZES[1][1], 'light', channelId)
    const code = page.locator(`article[data-id="${id}"] .b-code`).nth(0)
    await code.locator('.copy-button').focus()
    await page.keyboard.press('Tab') // the log is narrow: nothing to scroll, so no stop on it
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Show more')
    await page.keyboard.press('Enter')
    expect(await code.locator('button.more').getAttribute('aria-expanded')).toBe('true')
    await page.keyboard.press('Space')
    expect(await code.locator('button.more').getAttribute('aria-expanded')).toBe('false')
    await context.close()
  })

  test('every code block copies its code, says Copied, and has a name', async () => {
    const { channelId, id } = await sendLong()
    for (const [, viewport] of SIZES) {
      const { context, page } = await open(viewport, 'light', channelId)
      const m = page.locator(`article[data-id="${id}"]`)
      const tap = async (sel: ReturnType<Page['locator']>) =>
        viewport.touch ? sel.tap() : sel.click()
      const copyLog = m.locator('.b-code').nth(0).locator('.copy-button')
      expect(await copyLog.getAttribute('aria-label')).toBe('Copy text code')
      await tap(copyLog)
      await m.locator('.b-code').nth(0).locator('.copy-button', { hasText: 'Copied' }).waitFor()
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(LOG)
      expect(await m.locator('.b-code').nth(0).locator('[role="status"]').textContent()).toBe(
        'Copied',
      )
      await tap(m.locator('.b-code').nth(1).locator('.copy-button'))
      await m.locator('.b-code').nth(1).locator('.copy-button', { hasText: 'Copied' }).waitFor()
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(SHORT)
      // A code block written in markdown has one as well.
      const fence = m.locator('.md-code .copy-button')
      expect(await fence.getAttribute('aria-label')).toBe('Copy code')
      await fence.scrollIntoViewIfNeeded()
      await tap(fence)
      await m.locator('.md-code .copy-button', { hasText: 'Copied' }).waitFor()
      expect((await page.evaluate(() => navigator.clipboard.readText())).trim()).toBe(FENCE)
      // The feedback goes after a moment.
      await m.locator('.b-code').nth(0).locator('.copy-button', { hasText: 'Copy' }).waitFor()
      await context.close()
    }
  })

  test('wide tables scroll in their own labelled, focusable box; the page never widens', async () => {
    const { channelId, id } = await sendLong()
    for (const [name, viewport] of SIZES) {
      const { context, page } = await open(viewport, 'dark', channelId)
      const m = `article[data-id="${id}"]`
      const table = page.locator(`${m} .b-table`)
      await table.scrollIntoViewIfNeeded()
      const t = await box(page, `${m} .b-table`)
      const msg = await box(page, m)
      expect(t.scrollWidth).toBeGreaterThan(t.clientWidth) // it does scroll sideways
      expect(t.width).toBeLessThanOrEqual(msg.width)
      expect(await table.getAttribute('tabindex')).toBe('0')
      expect(await table.getAttribute('aria-label')).toBe('Table')
      expect(await table.evaluate((el) => getComputedStyle(el).overflowX)).toBe('auto')
      await table.focus()
      await page.keyboard.press('ArrowRight')
      await page.keyboard.press('ArrowRight')
      await page.waitForFunction(
        (sel) => (document.querySelector(sel)?.scrollLeft ?? 0) > 0,
        `${m} .b-table`,
      )
      // Markdown's table: the same, in a region of its own.
      const mdTable = page.locator(`${m} .md-table`)
      expect(await mdTable.getAttribute('tabindex')).toBe('0')
      expect(await mdTable.getAttribute('role')).toBe('region')
      expect(await mdTable.getAttribute('aria-label')).toBe('Table')
      const md = await box(page, `${m} .md-table`)
      expect(md.scrollWidth).toBeGreaterThan(md.clientWidth)
      expect(md.width).toBeLessThanOrEqual(msg.width)
      expect(await pageFits(page)).toBe(true)
      await screenshot(page, `long-content-table-${name}-dark`)
      await context.close()
    }
  })
})
