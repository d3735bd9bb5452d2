import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { PHONE, webTest } from './harness.ts'

/**
 * A long thread (issue 18) mounts only the messages near the screen (message-window.ts):
 * scrolling back through 1,000 messages keeps the mounted count bounded, reaches the first
 * message and comes back to the newest; an address to an old message still lands on it. No
 * timing here: how fast is bench/web-speed.ts's.
 */
const web = webTest()
const COUNT = 1000

/**
 * The scroll and the messages mounted in the thread's list (pins are not in it), read in one
 * go: a page of older messages may render between two reads (a loaded machine makes that
 * likely), and the 150 mounted before it paired with the spacers after it is no real state.
 */
const state = (page: Page) =>
  page.locator('.messages').evaluate((el) => {
    const mounted = [...el.querySelectorAll('article.msg[data-id]')]
    const box = el.getBoundingClientRect()
    const onScreen = mounted.filter((m) => {
      const r = m.getBoundingClientRect()
      return r.bottom > box.top && r.top < box.bottom
    })
    return {
      mounted: mounted.length,
      /** Spacers stand in for messages not mounted: the thread is windowed. */
      windowed: el.querySelector('.msg-spacer') !== null,
      texts: onScreen.map((m) => m.querySelector('.msg-text')?.textContent ?? ''),
      top: el.scrollTop,
      atBottom: el.scrollHeight - el.scrollTop - el.clientHeight < 2,
    }
  })

/** Scrolls the list by `by` pixels and lets the window follow (two frames). */
const scrollBy = (page: Page, by: number) =>
  page.locator('.messages').evaluate(async (el, dy) => {
    el.scrollTop += dy
    for (let i = 0; i < 2; i++) await new Promise((r) => requestAnimationFrame(r))
  }, by)

describe('a long thread', () => {
  const ids: string[] = []
  let bot: Awaited<ReturnType<typeof web.server.addChannel>> | undefined
  let channelId = ''
  let askId = ''

  test('scrolling to the first of 1,000 messages and back keeps few mounted', async () => {
    bot = await web.server.addChannel('Long bot')
    channelId = bot.channelId
    for (let i = 1; i <= COUNT; i++) {
      const { message } = await bot.agent.send({ body: { text: `Line ${i}` } })
      ids.push(message.id)
      if (i === COUNT - 100) {
        const { message: ask } = await bot.agent.send({
          body: { title: 'Commit message?', blocks: [{ type: 'text_input', id: 'msg' }] },
        })
        askId = ask.id
      }
    }
    const { context, page } = await web.open({ viewport: PHONE, path: `/c/${channelId}` })
    const log = page.locator('.messages')
    await log.getByText(`Line ${COUNT}`, { exact: true }).waitFor()
    let most = 0
    let reached = false
    // An open question is kept mounted (what is typed in its form stays) however far away.
    const question = page.locator(`.messages article[data-id="${askId}"]`)
    let typed = false
    for (let step = 0; step < 2000 && !reached; step++) {
      await scrollBy(page, -700)
      if (!typed && (await question.count()) > 0) {
        await question.getByLabel('Answer').fill('half an answer')
        typed = true
      }
      const now = await state(page)
      // Up to 150 loaded, all are mounted (as before); past that only those near the screen.
      if (now.windowed) most = Math.max(most, now.mounted)
      expect(now.texts.length).toBeGreaterThan(0) // never a blank screen
      reached = now.top === 0 && now.texts.includes('Line 1')
      if (now.top === 0 && !reached) await Bun.sleep(50) // an older page on its way
    }
    expect(reached).toBe(true)
    expect(typed).toBe(true)
    expect(await question.getByLabel('Answer').inputValue()).toBe('half an answer')
    expect(most).toBeGreaterThan(0)
    expect(most).toBeLessThan(80)
    expect(await log.getByRole('button', { name: 'Show older messages' }).count()).toBe(0)
    // Back down to the newest, by scrolling.
    for (let step = 0; step < 2000; step++) {
      await scrollBy(page, 900)
      const now = await state(page)
      expect(now.mounted).toBeLessThan(80)
      if (now.atBottom) break
    }
    const end = await state(page)
    expect(end.atBottom).toBe(true)
    expect(end.texts).toContain(`Line ${COUNT}`)
    // At the bottom, a new message shows at once, as in a short thread.
    await bot.agent.send({ body: { text: 'Fresh at the end' } })
    await log.getByText('Fresh at the end', { exact: true }).waitFor()
    await page.waitForFunction(() => {
      const el = document.querySelector('.messages') as HTMLElement
      return el.scrollHeight - el.scrollTop - el.clientHeight < 2
    })
    // A jump to the top (a scroll bar dragged) lands on mounted messages too.
    await page.locator('.messages').evaluate((el) => {
      el.scrollTop = 0
    })
    await page.waitForFunction(() =>
      [...document.querySelectorAll('.messages .msg-text')].some((m) => m.textContent === 'Line 1'),
    )
    await context.close()
  }, 120_000)

  test('an address to a message 300 back lands on it and marks it', async () => {
    const target = ids[COUNT - 300] as string
    const { context, page } = await web.open({ viewport: PHONE, path: `/c/${channelId}#${target}` })
    const article = page.locator(`.messages article.focused[data-id="${target}"]`)
    await article.waitFor({ timeout: 20_000 })
    await page.waitForTimeout(300)
    const place = await article.evaluate((el) => {
      const list = (el.closest('.messages') as HTMLElement).getBoundingClientRect()
      const a = el.getBoundingClientRect()
      return { inside: a.top >= list.top - 1 && a.top < list.bottom - 20 }
    })
    expect(place.inside).toBe(true)
    expect((await state(page)).mounted).toBeLessThan(80)
    await context.close()
  }, 60_000)
})
