import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { sendEveryBlock } from './fixtures.ts'
import { DESKTOP, PHONE, screenshot, webTest } from './harness.ts'

const web = webTest()

async function openThread(viewport = DESKTOP, channelId = web.server.channelId) {
  return web.open({ viewport, path: `/c/${channelId}` })
}

const text = async (page: Page, selector: string) =>
  ((await page.locator(selector).first().textContent({ timeout: 5000 })) ?? '').trim()

describe('a thread', () => {
  test('shows every block type, the pins on top, at phone and desktop sizes', async () => {
    const { message } = await sendEveryBlock(web.server.agent)
    await web.server.agent.pin('status', {
      body: {
        title: 'Deploy status',
        blocks: [{ type: 'progress', value: 3, max: 5, label: 'Rolling out' }],
      },
    })
    for (const [name, viewport] of [
      ['phone', PHONE],
      ['desktop', DESKTOP],
    ] as const) {
      const { context, page, errors } = await openThread(viewport)
      const m = `article[data-id="${message.id}"]`
      expect(await text(page, `${m} .msg-title`)).toBe('Nightly build #512')
      expect(await text(page, `${m} .msg-text`)).toBe('All green except one flaky test.')
      expect(await text(page, `${m} .b-heading`)).toBe('Summary')
      expect(await text(page, `${m} .markdown strong`)).toBe('Bold')
      const mdLink = page.locator(`${m} .markdown a`)
      expect(await mdLink.getAttribute('href')).toBe('https://example.com/docs')
      expect(await mdLink.getAttribute('target')).toBe('_blank')
      expect(await mdLink.getAttribute('rel')).toBe('noopener noreferrer')
      expect(await text(page, `${m} .b-code figcaption`)).toBe('typescript')
      expect(await text(page, `${m} .b-code code`)).toContain('const answer = 42')
      const link = page.locator(`${m} .b-link a`)
      expect(await link.textContent()).toBe('Open the build')
      expect(await link.getAttribute('href')).toBe('https://ci.example.com/builds/512')
      expect(await link.getAttribute('rel')).toBe('noopener noreferrer')
      const bars = page.locator(`${m} .b-progress`)
      expect(await bars.count()).toBe(2)
      expect(await bars.nth(0).textContent()).toContain('7 / 10')
      expect(await bars.nth(1).textContent()).toContain('40%')
      expect(await page.locator(`${m} .b-keyvalue dt`).allTextContents()).toEqual([
        'Branch',
        'Commit',
        'Duration',
      ])
      expect(await page.locator(`${m} .b-table th`).allTextContents()).toEqual([
        'Suite',
        'Passed',
        'Failed',
      ])
      expect(await page.locator(`${m} .b-table td.num`).count()).toBe(6)
      // The image loads from the person-side download route with the session cookie.
      await page.waitForFunction((sel) => {
        const img = document.querySelector(sel) as HTMLImageElement | null
        return img?.complete && img.naturalWidth > 0
      }, `${m} .b-image img`)
      expect(await page.locator(`${m} .b-image img`).getAttribute('alt')).toBe('Build chart')
      const file = page.locator(`${m} .b-file`)
      expect(await file.textContent()).toContain('report.csv')
      expect(await file.textContent()).toContain('B · text/csv')
      expect(await file.getAttribute('download')).toBe('report.csv')
      const embed = page.frameLocator(`${m} .b-html iframe`)
      expect(await embed.locator('#hello').textContent()).toBe('Hello from the embed')
      expect(await text(page, `${m} .b-unknown`)).toContain('“sparkline”')
      expect(await text(page, `${m} .b-unknown`)).toContain('Update the app')
      expect(await text(page, 'section[aria-label="Pinned"] .msg-title')).toBe('Deploy status')
      await screenshot(page, `thread-${name}`)
      await page.locator('.messages').evaluate((el) => {
        el.scrollTop = 0
      })
      await screenshot(page, `thread-${name}-top`)
      expect(errors).toEqual([])
      await context.close()
    }
  })

  test("shows an agent's new message at once, without a reload", async () => {
    const { context, page } = await openThread()
    await page.locator('.messages[role="log"]').waitFor()
    await page.waitForSelector('.messages .msg')
    const started = performance.now()
    await web.server.agent.send({ body: { text: 'Fresh from the agent' } })
    // Only the page's long-poll, woken by the send, can show it (the app refreshes nothing on a
    // timer): milliseconds here; 3 s is for a loaded 2-core machine running browsers side by side.
    await page.locator('.messages').getByText('Fresh from the agent').waitFor({ timeout: 3000 })
    expect(performance.now() - started).toBeLessThan(3000)
    await context.close()
  })

  test("the person's own message shows the agent's seen, working and done", async () => {
    const { context, page } = await openThread()
    const box = page.getByLabel('Message to the agent')
    await box.fill('Please rerun the flaky test')
    await box.press('Enter')
    const mine = page.locator('article.mine:not(.pending)', {
      hasText: 'Please rerun the flaky test',
    })
    await mine.locator('.msg-state', { hasText: 'Sent' }).waitFor()
    const { messages } = await web.server.agent.feed({ sender: 'human' }) // reading marks it seen
    const id = messages.find((m) => 'body' in m && m.body.text === 'Please rerun the flaky test')
      ?.id as string
    await mine.locator('.msg-state', { hasText: 'Seen' }).waitFor()
    await web.server.agent.ack(id, 'working')
    await mine.locator('.msg-state', { hasText: 'Working on it' }).waitFor()
    await web.server.agent.ack(id, 'done')
    await mine.locator('.msg-state', { hasText: 'Done' }).waitFor()
    await context.close()
  })

  test('pins update live: a new pin, an edit, an unpin', async () => {
    const { context, page } = await openThread()
    const pins = page.locator('section[aria-label="Pinned"]')
    await pins.waitFor()
    await web.server.agent.pin('coverage', { body: { title: 'Coverage', text: '81%' } })
    await pins.getByText('Coverage').waitFor()
    await web.server.agent.editPin('coverage', { text: '83%' })
    await pins.getByText('83%').waitFor()
    await web.server.agent.unpin('coverage')
    await pins.getByText('Coverage').waitFor({ state: 'detached' })
    await context.close()
  })

  test('the channel list shows the last message, unread count and open questions, live', async () => {
    const other = await web.server.addChannel('Deploy bot')
    const context = await web.context()
    const page = await context.newPage()
    await page.goto(web.server.url)
    const row = page.locator('.channel', { hasText: 'Deploy bot' })
    await row.waitFor()
    await other.agent.send({ body: { text: 'Deployed v2 to staging' } })
    await other.agent.send({
      body: { title: 'Ship it?', blocks: [{ type: 'confirm', id: 'go', label: 'Ship' }] },
    })
    // The list follows the person-wide feed: no polling interval to wait out.
    await row.getByText('Ship it?').waitFor({ timeout: 1500 })
    expect(await row.locator('.badge.count').textContent()).toContain('2')
    expect(await row.locator('.badge.ask').textContent()).toBe('Question')
    // Opening the channel reads it: the unread badge goes.
    await row.click()
    await page.locator('.thread-head h2', { hasText: 'Deploy bot' }).waitFor()
    await row.locator('.badge.count').waitFor({ state: 'detached' })
    // A rename by the agent is not a message, and still shows at once.
    await other.agent.rename('Deploy bot 2')
    await page.locator('.channel', { hasText: 'Deploy bot 2' }).waitFor({ timeout: 1500 })
    await context.close()
  })

  test('a long channel opens at its newest messages and loads older ones on scrolling up', async () => {
    const long = await web.server.addChannel('Chatty bot')
    for (let i = 1; i <= 120; i++) await long.agent.send({ body: { text: `Line ${i}` } })
    const context = await web.context({ viewport: PHONE })
    const page = await context.newPage()
    const seen: string[] = []
    page.on('request', (r) => seen.push(r.url()))
    await page.goto(`${web.server.url}/c/${long.channelId}`)
    const log = page.locator('.messages')
    await log.getByText('Line 120', { exact: true }).waitFor()
    // The newest screenful first, the rest of the page a frame later (message-window.ts).
    await page.waitForFunction(() => document.querySelectorAll('.messages .msg').length >= 50)
    expect(await log.locator('.msg').count()).toBe(50)
    expect(seen.some((u) => u.includes('tail=50'))).toBe(true)
    expect(seen.some((u) => u.includes('since=0'))).toBe(false)
    // Scrolling to the top reads the page before, and keeps the same message in view.
    await log.evaluate((el) => {
      el.scrollTop = 0
    })
    await log.getByText('Line 70', { exact: true }).waitFor()
    expect(await log.evaluate((el) => el.scrollTop)).toBeGreaterThan(200)
    for (let i = 0; i < 5; i++) {
      await log.evaluate((el) => {
        el.scrollTop = 0
      })
      await Bun.sleep(150)
    }
    await log.getByText('Line 1', { exact: true }).waitFor()
    expect(await log.locator('.msg').count()).toBe(120)
    await log.getByRole('button', { name: 'Show older messages' }).waitFor({ state: 'detached' })
    await context.close()
  })
})
