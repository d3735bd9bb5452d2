import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { sendEveryBlock } from './fixtures.ts'
import { PHONE, screenshot, webTest } from './harness.ts'

/**
 * Using the app without a mouse and with a screen reader: a question reached and answered with
 * the keyboard alone, focus always visible, every control named; and both themes at phone size.
 */
const web = webTest({ label: 'Release bot' })

async function open(path: string, colorScheme: 'light' | 'dark' = 'light'): Promise<Page> {
  const context = await web.context({ viewport: PHONE })
  const page = await context.newPage()
  await page.emulateMedia({ colorScheme })
  await page.goto(`${web.server.url}${path}`)
  return page
}

/** Form controls in the accessibility tree that a screen reader would announce without a name. */
async function unnamedControls(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page)
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
    nodes: { ignored: boolean; role?: { value: string }; name?: { value: string } }[]
  }
  const controls = ['textbox', 'checkbox', 'radio', 'combobox', 'spinbutton', 'slider', 'button']
  return nodes
    .filter((n) => !n.ignored && controls.includes(n.role?.value ?? ''))
    .filter((n) => !n.name?.value?.trim())
    .map((n) => n.role?.value as string)
}

describe('keyboard and screen reader', () => {
  test('a question is reached and answered with the keyboard alone, focus visible', async () => {
    const sent = await web.server.agent.send({
      body: {
        title: 'Deploy to production?',
        blocks: [{ type: 'confirm', id: 'go', label: 'Deploy' }],
      },
    })
    const page = await open(`/c/${web.server.channelId}`)
    const button = page.getByRole('button', { name: 'Deploy' })
    await button.waitFor()
    let reached = false
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab')
      reached = await button.evaluate((el) => el === document.activeElement)
    }
    expect(reached).toBe(true)
    // The focus ring shows: an outline or a box shadow under :focus-visible.
    const ring = await button.evaluate((el) => {
      const s = getComputedStyle(el)
      return el.matches(':focus-visible') && (s.outlineStyle !== 'none' || s.boxShadow !== 'none')
    })
    expect(ring).toBe(true)
    await page.keyboard.press('Enter')
    for (let i = 0; i < 100; i++) {
      if ((await web.server.ctx.store.messages.byId(sent.message.id))?.ask_status === 'answered')
        break
      await Bun.sleep(20)
    }
    expect((await web.server.ctx.store.messages.byId(sent.message.id))?.ask_status).toBe('answered')
    await page.context().close()
  })

  test('every control has an accessible name: thread with every block, list, settings', async () => {
    await sendEveryBlock(web.server.agent)
    for (const path of [`/c/${web.server.channelId}`, '/', '/settings']) {
      const page = await open(path)
      // The first one shown: on a phone a thread hides the channel list, which is still there.
      await page
        .locator('main, .thread, .channel-list, .card')
        .filter({ visible: true })
        .first()
        .waitFor()
      await Bun.sleep(300)
      expect({ path, unnamed: await unnamedControls(page) }).toEqual({ path, unnamed: [] })
      await page.context().close()
    }
  })
})

/** The page's background and text colours. */
const colors = (page: Page) =>
  page.evaluate(() => {
    const style = getComputedStyle(document.body)
    return { bg: style.backgroundColor, text: style.color }
  })

const THEMES = {
  light: { bg: 'rgb(246, 246, 249)', text: 'rgb(27, 27, 36)' },
  dark: { bg: 'rgb(17, 17, 24)', text: 'rgb(236, 236, 243)' },
}

describe('themes', () => {
  test('light and dark at phone size', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const page = await open(`/c/${web.server.channelId}`, scheme)
      await page.locator('.messages .msg').first().waitFor()
      await Bun.sleep(300)
      await screenshot(page, `thread-phone-${scheme}`)
      expect(await colors(page)).toEqual(THEMES[scheme])
      // The person's own choice in the app wins over the system's.
      const other = scheme === 'light' ? 'dark' : 'light'
      await page.evaluate((t) => document.documentElement.setAttribute('data-theme', t), other)
      expect(await colors(page)).toEqual(THEMES[other])
      // ...and form controls follow that choice too, not the system's.
      expect(await page.evaluate(() => getComputedStyle(document.body).colorScheme)).toBe(other)
      const settings = await open('/settings', scheme)
      await settings.getByRole('heading', { name: 'Sessions' }).waitFor()
      await screenshot(settings, `settings-phone-${scheme}`)
      await page.context().close()
      await settings.context().close()
    }
  })
})
