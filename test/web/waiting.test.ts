import { describe, expect, test } from 'bun:test'
import { overflowing } from './fixtures.ts'
import { DESKTOP, PHONE, screenshot, webTest } from './harness.ts'

/**
 * "Waiting on you" on top of the channel list: every open approval and question of every agent,
 * oldest first, kept live by the person-wide feed; an item opens its message in its thread,
 * scrolled to and marked, even when it is older than the newest page of that thread.
 */
const web = webTest({ label: 'Claude Code' })

const approval = (tool: string, input: unknown, danger?: boolean) => ({
  type: 'approval',
  id: 'approval',
  tool,
  input,
  ...(danger ? { danger } : {}),
})

describe('waiting on you', () => {
  test('lists open approvals across agents, oldest first, live; one opens on its card', async () => {
    const other = await web.server.addChannel('Codex')
    const list = await web.open({ path: '/', viewport: PHONE })
    await list.page.locator('.channel-list').waitFor()
    expect(await list.page.locator('.open-asks').count()).toBe(0)

    // Older messages after it, so the linked card is not among the thread's newest page.
    const first = await web.server.agent.send({
      body: {
        title: 'Claude Code wants to run a command',
        blocks: [approval('Bash', { command: 'terraform apply' }, true)],
      },
    } as never)
    for (let i = 0; i < 60; i++) await web.server.agent.send({ body: { text: `Step ${i}` } })
    const second = await other.agent.send({
      body: {
        title: 'Codex wants to edit a file',
        blocks: [approval('Edit', { file_path: '/srv/app.ts', old_string: 'a', new_string: 'b' })],
      },
    } as never)
    const question = await other.agent.send({
      body: { title: 'Ship it?', blocks: [{ type: 'confirm', id: 'go', label: 'Ship' }] },
    } as never)

    // Live: all appear without a reload, the oldest first; questions too.
    const items = list.page.locator('.open-ask')
    await list.page.locator('.open-ask', { hasText: 'Ship it?' }).waitFor()
    expect(await items.locator('.open-ask-title').allTextContents()).toEqual([
      'Claude Code wants to run a command',
      'Codex wants to edit a file',
      'Ship it?',
    ])
    expect(await items.locator('.open-ask-kind').allTextContents()).toEqual([
      '⚠ Approval',
      'Approval',
      'Question',
    ])
    expect(await items.locator('.open-ask-channel').allTextContents()).toEqual([
      'Claude Code',
      'Codex',
      'Codex',
    ])
    expect(await items.locator('.open-ask-what').allTextContents()).toEqual([
      'terraform apply',
      'Edit /srv/app.ts',
    ])
    expect(await items.first().getAttribute('class')).toContain('danger')
    expect(await list.page.locator('#open-asks-head .badge').textContent()).toBe('3')
    expect(await overflowing(list.page)).toEqual([])
    await screenshot(list.page, 'waiting-phone')
    await list.page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(list.page, 'waiting-phone-dark')
    await list.page.emulateMedia({ colorScheme: 'light' })

    // The oldest lives 60 messages back: opening it reads older pages until it is there,
    // scrolls its list to it and marks it; the thread's header stays in place.
    await items.first().click()
    await list.page.waitForURL(`${web.server.url}/c/${web.server.channelId}#${first.message.id}`)
    const card = list.page.locator(`article[data-id="${first.message.id}"]`)
    await list.page.locator(`article.focused[data-id="${first.message.id}"]`).waitFor()
    const [cardTop, headBottom] = await card.evaluate((el) => [
      el.getBoundingClientRect().top,
      (document.querySelector('.thread-head') as Element).getBoundingClientRect().bottom,
    ])
    expect(headBottom).toBeGreaterThan(0)
    expect(cardTop).toBeGreaterThanOrEqual(headBottom as number)
    expect(cardTop).toBeLessThan((headBottom as number) + 100)
    await screenshot(list.page, 'waiting-opened-phone')

    // Answered: gone from the list, live.
    await card.getByRole('button', { name: 'Allow', exact: true }).click()
    await card.locator('.ap-outcome.allowed').waitFor()
    await list.page.goBack()
    await list.page.waitForFunction(() => document.querySelectorAll('.open-ask').length === 2)
    await other.agent.cancel(second.message.id, 'answered in the terminal')
    await other.agent.cancel(question.message.id)
    await list.page.locator('.open-asks').waitFor({ state: 'detached' })
    expect(list.errors).toEqual([])
  })

  test('on a wide screen the list sits beside the thread; an item opens there', async () => {
    const { message } = await web.server.agent.send({
      body: {
        title: 'Claude Code wants to fetch a web page',
        blocks: [approval('WebFetch', { url: 'https://example.com/a', prompt: 'Read it' })],
      },
    } as never)
    const { page, errors } = await web.open({ path: '/', viewport: DESKTOP })
    await page.locator('.open-ask').click()
    await page.locator(`article.focused[data-id="${message.id}"]`).waitFor()
    // Both panes: the list is still there beside the opened thread.
    expect(await page.locator('.open-ask').count()).toBe(1)
    expect(await overflowing(page)).toEqual([])
    await screenshot(page, 'waiting-desktop')
    await page
      .locator(`article[data-id="${message.id}"]`)
      .getByRole('button', { name: 'Deny' })
      .click()
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.locator('.open-asks').waitFor({ state: 'detached' })
    expect((await web.server.agent.ask(message.id)).answer).toEqual({ decision: 'deny' })
    expect(errors).toEqual([])
  })
})
