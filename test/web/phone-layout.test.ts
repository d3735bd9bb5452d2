import { describe, expect, test } from 'bun:test'
import type { Frame, Page } from 'playwright-core'
import { sendEveryBlock } from './fixtures.ts'
import { DESKTOP, PHONE, screenshot, webTest } from './harness.ts'
import { touchContext } from './touch.ts'

/**
 * The phone layout (issue 18): pins as a compact strip that opens and folds, the newest
 * message in sight above the composer, nothing wider than the screen, a composer that grows
 * to a cap, a Send button that keeps its one line, and html embeds that follow the app's theme.
 */
const web = webTest()

const TOUCH_PHONE = { ...PHONE, touch: true }
const SIZES = [
  ['phone', TOUCH_PHONE],
  ['desktop', { ...DESKTOP, touch: false }],
] as const

async function open(
  path: string,
  options: {
    viewport?: typeof TOUCH_PHONE | (typeof SIZES)[1][1]
    scheme?: 'light' | 'dark'
    theme?: string
  } = {},
) {
  const context = await touchContext(web, options.viewport ?? TOUCH_PHONE)
  if (options.theme) {
    // The person's choice in settings, as theme.ts keeps it.
    await context.addInitScript((t) => localStorage.setItem('hark.theme', t), options.theme)
  }
  const page = await context.newPage()
  await page.emulateMedia({ colorScheme: options.scheme ?? 'light' })
  await page.goto(`${web.server.url}${path}`)
  return { context, page }
}

const fitsSideways = (page: Page) =>
  page.evaluate(() => {
    const root = document.scrollingElement as Element
    const wide = [...document.querySelectorAll('.messages, .msg, .pins, .composer, .sidebar, main')]
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => el.className)
    return { page: root.scrollWidth <= root.clientWidth, wide }
  })

/** Whether the element is wholly inside the message list's visible part. */
const inSight = (page: Page, selector: string) =>
  page.locator(selector).evaluate((el) => {
    const list = (el.closest('.messages') as Element).getBoundingClientRect()
    const composer = (document.querySelector('.composer') as Element).getBoundingClientRect()
    const r = el.getBoundingClientRect()
    return r.bottom <= list.bottom + 1 && r.bottom <= composer.top + 1 && r.top >= list.top - 1
  })

describe('phone layout', () => {
  test('three pins take at most a quarter of the phone; Show all opens them, Show less folds', async () => {
    const { agent, channelId } = await web.server.addChannel('Pinned bot')
    await agent.pin('deploy', {
      body: {
        title: 'Deploy status',
        blocks: [{ type: 'progress', value: 3, max: 5, label: 'Rolling out' }],
      },
    })
    await agent.pin('coverage', { body: { title: 'Coverage', text: '83% of lines, up from 81%' } })
    await agent.pin('notes', {
      body: { title: 'Release notes', text: 'A long note. '.repeat(40) },
    })
    await agent.send({ body: { text: 'Hello from the pinned bot' } })
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page } = await open(`/c/${channelId}`, { scheme })
      const pins = page.locator('section[aria-label="Pinned"]')
      const toggle = pins.getByRole('button', { name: 'Show all' })
      await toggle.waitFor()
      const compact = (await pins.boundingBox())?.height ?? Infinity
      expect(compact).toBeLessThanOrEqual(PHONE.height * 0.25)
      expect(await pins.locator('.pin-line').count()).toBe(3)
      expect(await pins.locator('.pin-line').nth(0).textContent()).toContain('Rolling out 3 / 5')
      expect(await toggle.getAttribute('aria-expanded')).toBe('false')
      expect(await toggle.getAttribute('aria-controls')).toBe('pins-list')
      expect(await page.locator('#pins-list').count()).toBe(1)
      await screenshot(page, `pins-phone-${scheme}`)
      await toggle.tap()
      const fold = pins.getByRole('button', { name: 'Show less' })
      expect(await fold.getAttribute('aria-expanded')).toBe('true')
      expect(await pins.locator('article.msg').count()).toBe(3)
      await pins.getByText('Rolling out').waitFor()
      expect(((await pins.boundingBox())?.height ?? 0) > compact).toBe(true)
      await screenshot(page, `pins-phone-${scheme}-open`)
      await fold.tap()
      await pins.getByRole('button', { name: 'Show all' }).waitFor()
      expect((await pins.boundingBox())?.height).toBeLessThanOrEqual(PHONE.height * 0.25)
      // The newest message is still in sight under the pins, and a thread this short sits
      // at the bottom, by the composer, as in a chat app.
      const hello = page.locator('.messages article.msg', { hasText: 'Hello from the pinned bot' })
      await hello.waitFor()
      const gap = await hello.evaluate(
        (el) =>
          (document.querySelector('.composer') as Element).getBoundingClientRect().top -
          el.getBoundingClientRect().bottom,
      )
      expect(gap).toBeGreaterThanOrEqual(0)
      expect(gap).toBeLessThan(48)
      expect(await fitsSideways(page)).toEqual({ page: true, wide: [] })
      await context.close()
    }
  })

  test('a pin with progress has a thin bar under its line in the strip, live, both themes', async () => {
    const { agent, channelId } = await web.server.addChannel('Progress bot')
    // What `hark progress build 40 --max 120 --label tests` pins.
    const progress = (value: number) => ({
      body: {
        title: 'build',
        blocks: [{ type: 'progress', id: 'bar', value, max: 120, label: 'tests' }],
      },
      silent: true,
    })
    await agent.pin('build', progress(40))
    await agent.pin('coverage', { body: { title: 'Coverage', text: '83% of lines' } })
    let value = 40
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page } = await open(`/c/${channelId}`, { scheme })
      const line = page.locator('.pin-strip .pin-line', { hasText: 'build' })
      await line.waitFor()
      expect(await line.textContent()).toContain(`tests ${value} / 120`)
      const bar = line.getByRole('progressbar', { name: 'build' })
      expect(await bar.getAttribute('value')).toBe(String(value))
      expect(await bar.getAttribute('max')).toBe('120')
      // Under the line's text, as wide as the line, and thin.
      const [text, box] = [await line.locator('.pin-text').boundingBox(), await bar.boundingBox()]
      expect(box && text && box.y >= text.y + text.height - 1).toBe(true)
      expect(box && text && box.width >= text.width - 1).toBe(true)
      expect(box?.height).toBeLessThanOrEqual(4)
      // A pin without progress has no bar.
      expect(
        await page
          .locator('.pin-strip .pin-line', { hasText: 'Coverage' })
          .locator('progress')
          .count(),
      ).toBe(0)
      await screenshot(page, `pins-progress-phone-${scheme}`)
      if (scheme === 'light') {
        // Live: the agent's next figure moves the bar without a reload.
        value = 90
        await agent.pin('build', progress(value))
        await page.waitForFunction(
          () => document.querySelector('.pin-strip progress')?.getAttribute('value') === '90',
        )
      }
      expect(await fitsSideways(page)).toEqual({ page: true, wide: [] })
      await context.close()
    }
  })

  test('the newest message is in sight above the composer: on opening, on arrival, while writing', async () => {
    const { agent, channelId } = await web.server.addChannel('Chatty bot')
    for (let i = 1; i <= 25; i++) {
      await agent.send({ body: { title: `Update ${i}`, text: `Line ${i}\n`.repeat((i % 4) + 1) } })
    }
    const last = await agent.send({ body: { text: 'The newest one' } })
    const { context, page } = await open(`/c/${channelId}`)
    await page.locator(`article[data-id="${last.message.id}"]`).waitFor()
    // All of it was unread, so the thread opened at "New messages" (as it should); read now,
    // it opens at the newest message.
    await page.waitForTimeout(800)
    await page.reload()
    await page.locator(`article[data-id="${last.message.id}"]`).waitFor()
    await page.waitForTimeout(300) // late layout: messages measured as they come into view
    expect(await inSight(page, `article[data-id="${last.message.id}"]`)).toBe(true)
    const next = await agent.send({
      body: { text: 'Arrived while reading', blocks: [{ type: 'code', code: 'a\nb\nc\nd' }] },
    })
    const arrived = `article[data-id="${next.message.id}"]`
    await page.locator(arrived).waitFor()
    await page.waitForFunction(
      (sel) => {
        const el = document.querySelector(sel) as Element
        const list = (el.closest('.messages') as Element).getBoundingClientRect()
        return el.getBoundingClientRect().bottom <= list.bottom + 1
      },
      arrived,
      { timeout: 3000 },
    )
    expect(await inSight(page, arrived)).toBe(true)
    // The composer grows with a long text: the newest message moves up with it.
    await page.getByLabel('Message to the agent').fill('one\ntwo\nthree\nfour\nfive\nsix')
    await page.waitForTimeout(100)
    expect(await inSight(page, arrived)).toBe(true)
    await screenshot(page, 'phone-newest-in-sight')
    await context.close()
  })

  test('nothing is wider than the screen: the list, a thread of every block and long words, settings', async () => {
    const { agent, channelId } = await web.server.addChannel('Wide bot')
    await sendEveryBlock(agent)
    const word = 'x'.repeat(300)
    const url = `https://example.com/${'very-long-path-segment/'.repeat(20)}?q=${'a'.repeat(80)}`
    await agent.send({
      body: {
        title: `A title with ${word}`,
        text: `Text with ${word} and ${url}`,
        blocks: [
          { type: 'markdown', text: `Markdown ${word} [link](${url}) ${url}\n\n\`${word}\`` },
          { type: 'code', code: `const long = '${word}'` },
          { type: 'link', url },
          { type: 'keyvalue', items: [{ key: 'Key', value: word }] },
          { type: 'heading', text: word },
          { type: 'table', columns: ['One', 'Two'], rows: [[word, url]] },
        ],
      },
    })
    await agent.pin('wide', { body: { title: word, text: url } })
    for (const [name, viewport] of SIZES) {
      for (const path of ['/', `/c/${channelId}`, '/settings']) {
        const { context, page } = await open(path, { viewport })
        if (path.startsWith('/c/')) await page.locator('.b-html iframe').first().waitFor()
        else
          await page
            .locator(path === '/' ? '.channel-list' : 'main h1')
            .first()
            .waitFor()
        await page.waitForTimeout(300)
        expect({ path, ...(await fitsSideways(page)) }).toEqual({ path, page: true, wide: [] })
        if (path.startsWith('/c/')) await screenshot(page, `phone-layout-wide-${name}`)
        await context.close()
      }
    }
  })

  test('the composer grows with its text to a cap, then scrolls; Send stays one line', async () => {
    const { context, page } = await open(`/c/${web.server.channelId}`)
    const box = page.getByLabel('Message to the agent')
    const send = page.getByRole('button', { name: 'Send' })
    await box.waitFor()
    const height = async () => (await box.boundingBox())?.height ?? 0
    const one = await height()
    const sendBefore = await send.boundingBox()
    expect(await send.evaluate((el) => getComputedStyle(el).whiteSpace)).toBe('nowrap')
    expect(sendBefore?.height).toBeLessThanOrEqual(48)
    await box.fill('one\ntwo\nthree')
    const three = await height()
    expect(three).toBeGreaterThan(one + 30)
    await box.fill(Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n'))
    const capped = await height()
    expect(capped).toBeLessThanOrEqual(PHONE.height * 0.4)
    expect(capped).toBeGreaterThan(three)
    expect(await box.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true)
    // Send keeps its size beside a full composer, and its label on one line.
    const sendAfter = await send.boundingBox()
    expect(sendAfter?.width).toBe(sendBefore?.width)
    expect(await send.evaluate((el) => el.getClientRects().length)).toBe(1)
    await screenshot(page, 'phone-composer-capped')
    await send.tap()
    // The sent message (the live feed may show it a moment before the outbox lets go of it).
    await page.locator('article.mine:not(.pending)', { hasText: 'line 30' }).waitFor()
    await page.waitForTimeout(100)
    expect(await height()).toBe(one) // emptied: back to one line
    await context.close()
  })

  test("an html embed follows the app's theme: system dark, a forced theme, a switch", async () => {
    const { agent, channelId } = await web.server.addChannel('Embed bot')
    await agent.send({
      body: {
        blocks: [
          {
            type: 'html',
            label: 'Plain',
            // No colours of its own, one rule for dark schemes, and a script that listens.
            html: `<p id="plain">No styles of its own</p><p id="themed">Themed</p>
              <style>@media screen and (prefers-color-scheme: dark) { #themed { color: rgb(1, 2, 3) } }</style>
              <script>
                window.flips = 0
                matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => window.flips++)
              </script>`,
          },
        ],
      },
    })
    const frameOf = async (page: Page): Promise<Frame> => {
      const el = await page.locator('.b-html iframe').elementHandle()
      const frame = await el?.contentFrame()
      if (!frame) throw new Error('no frame')
      await frame.locator('#plain').waitFor()
      return frame
    }
    const inside = (frame: Frame) =>
      frame.evaluate(() => ({
        scheme: getComputedStyle(document.documentElement).colorScheme,
        dark: matchMedia('(prefers-color-scheme: dark)').matches,
        // Text in the dark scheme's default colour is light: its red channel is high.
        light: Number(/\d+/.exec(getComputedStyle(document.body).color)?.[0]) > 200,
        // The page's own rule for dark schemes applies exactly when the media query says dark.
        rule:
          getComputedStyle(document.getElementById('themed') as Element).color === 'rgb(1, 2, 3)',
      }))
    for (const [scheme, theme, want] of [
      ['light', undefined, { scheme: 'light', dark: false, light: false, rule: false }],
      ['dark', undefined, { scheme: 'dark', dark: true, light: true, rule: true }],
      // A theme chosen in settings: the frame's scheme, colours, media queries and matchMedia
      // follow it, not the system (see docs/decisions.md).
      ['light', 'dark', { scheme: 'dark', dark: true, light: true, rule: true }],
      ['dark', 'light', { scheme: 'light', dark: false, light: false, rule: false }],
    ] as const) {
      const { context, page } = await open(`/c/${channelId}`, { scheme, theme })
      const frame = await frameOf(page)
      expect(await inside(frame)).toEqual(want)
      // The frame itself is see-through: the message's own surface shows.
      expect(
        await page.locator('.b-html iframe').evaluate((el) => getComputedStyle(el).backgroundColor),
      ).toBe('rgba(0, 0, 0, 0)')
      if (!theme) await screenshot(page, `embed-theme-phone-${scheme}`)
      // Switching the theme in the app reaches the frame at once.
      const other = want.scheme === 'dark' ? 'light' : 'dark'
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), other)
      await frame.waitForFunction(
        (t) => getComputedStyle(document.documentElement).colorScheme === t,
        other,
      )
      // The media query, the page's rule and the page's listener follow at once too.
      expect(await inside(frame)).toMatchObject({
        dark: other === 'dark',
        rule: other === 'dark',
      })
      expect(await frame.evaluate(() => (window as unknown as { flips: number }).flips)).toBe(1)
      await context.close()
    }
  })
})
