import { beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { addPersonToken } from '../../src/people/service.ts'
import { overflowing } from './fixtures.ts'
import { PHONE, screenshot, webTest } from './harness.ts'

/**
 * A channel's approval history (`/c/CHANNEL/approvals`, from the audit log): newest first, a
 * page at a time ("Show older" reads the page before the last one shown), each decision with
 * what it was about, when and by whom: a token's answer, the agent withdrawing it (and why) or
 * deleting it, expiry. Signed decisions and their passkey's name: signing.test.ts.
 */
const web = webTest({ label: 'Claude Code' })
let page: Page
let errors: string[]

const history = () => `${web.server.url}/c/${web.server.channelId}/approvals`

beforeAll(async () => {
  ;({ page, errors } = await web.open({ viewport: PHONE }))
})

const approval = (command: string) => ({
  blocks: [{ type: 'approval', id: 'approval', tool: 'Bash', input: { command } }],
})

describe('the approval history', () => {
  test('empty at first, and says so', async () => {
    await page.goto(history())
    await page.getByText('No approvals yet.').waitFor()
    expect(await page.getByRole('heading', { name: 'Approvals · Claude Code' }).count()).toBe(1)
  })

  test('newest first, 30 at a time; expired and withdrawn say so', async () => {
    const agent = web.server.agent
    // Expires unanswered: the agent's long-poll returns when it does.
    const expiring = await agent.send({ body: approval('make deploy'), expires_in: 1 } as never)
    expect((await agent.ask(expiring.message.id, 20)).message.ask?.status).toBe('expired')
    const withdrawn = await agent.send({ body: approval('make release') } as never)
    await agent.cancel(withdrawn.message.id, 'answered in the terminal')
    // 33 answered by scripts with person tokens (unsigned); the last by one with a label.
    const script = web.server.personClient(
      (await addPersonToken(web.server.ctx, { email: web.server.ownerEmail, label: 'nightly-ci' }))
        .token,
    )
    for (let i = 0; i < 33; i++) {
      const { message } = await agent.send({ body: approval(`echo ${i}`) } as never)
      const answer = i % 2 ? { decision: 'allow' } : { decision: 'deny', message: `no ${i}` }
      await (i === 32 ? script : web.server.person).answer(message.id, answer)
    }

    await page.goto(history())
    const items = page.locator('.history-item')
    await items.first().waitFor()
    expect(await items.count()).toBe(30)
    // The newest is the last answered (echo 32, a deny with its message).
    expect(await items.first().locator('.history-decision').textContent()).toBe('Denied')
    expect(await items.first().locator('.history-message').textContent()).toBe('no 32')
    expect(await items.nth(1).locator('.history-decision').textContent()).toBe('Allowed')
    expect(await items.first().locator('.history-by').textContent()).toBe(
      'Unsigned, with the token “nightly-ci”',
    )
    expect(await items.nth(1).locator('.history-by').textContent()).toBe(
      'Unsigned, with a person token',
    )
    expect(await overflowing(page)).toEqual([])
    await screenshot(page, 'approval-history-tokens-phone')

    await page.getByRole('button', { name: 'Show older' }).click()
    await items.nth(34).waitFor()
    expect(await items.count()).toBe(35)
    const last = await page.locator('.history-item:nth-last-child(-n+2)').evaluateAll((els) =>
      els.map((el) => ({
        decision: el.querySelector('.history-decision')?.textContent,
        by: el.querySelector('.history-by')?.textContent,
      })),
    )
    expect(last).toEqual([
      { decision: 'Withdrawn', by: 'By the agent: answered in the terminal' },
      { decision: 'Expired — not allowed', by: 'Nobody answered in time' },
    ])
    // That was the last page: nothing older to read.
    expect(await page.getByRole('button', { name: 'Show older' }).count()).toBe(0)
    await items.nth(34).scrollIntoViewIfNeeded()
    await screenshot(page, 'approval-history-end-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'approval-history-end-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })
  })

  test('a deleted approval: withdrawn if it was open; an answered one keeps its line, as sent', async () => {
    const agent = web.server.agent
    const open = await agent.send({ body: approval('make clean') } as never)
    await agent.remove(open.message.id)
    const answered = await agent.send({ body: approval('make lint') } as never)
    await web.server.person.answer(answered.message.id, { decision: 'allow' })
    await agent.remove(answered.message.id)

    await page.goto(history())
    const items = page.locator('.history-item')
    await items.nth(2).waitFor()
    const newest = await items.evaluateAll((els) =>
      els.slice(0, 3).map((el) => ({
        decision: el.querySelector('.history-decision')?.textContent,
        what: el.querySelector('.history-summary')?.textContent,
        by: el.querySelector('.history-by')?.textContent,
      })),
    )
    expect(newest).toEqual([
      { decision: 'Deleted by the agent', what: 'make lint', by: 'By the agent' },
      { decision: 'Allowed', what: 'make lint', by: 'Unsigned, with a person token' },
      { decision: 'Withdrawn — the agent deleted it', what: 'make clean', by: 'By the agent' },
    ])
  })

  test('the back arrow leads to the thread', async () => {
    await page.getByRole('link', { name: 'Back to the messages' }).click()
    await page.waitForURL(`${web.server.url}/c/${web.server.channelId}`)
    await page.locator('.messages-inner').waitFor()
    expect(errors).toEqual([])
  })
})
