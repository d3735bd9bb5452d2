import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page, Worker } from 'playwright-core'
import type { Message } from '../../src/messages/schema.ts'
import { type Receiver, startReceiver } from '../push/receiver.ts'
import { PHONE, screenshot, webTest } from './harness.ts'
import { click, nextPush, notifications, subscribeReceiver, workerPage } from './push-fixture.ts'
import {
  type Asked,
  agentCheck,
  answerPosts,
  registerPasskey,
  virtualAuthenticator,
} from './signing-fixture.ts'

/**
 * An approval's notification, end to end in a real Chromium with a passkey (the virtual
 * authenticator). A service worker cannot run WebAuthn, so the notification's Allow opens the
 * app at the message (`?act=allow`) and the card signs there: the passkey prompt starts by
 * itself (Chromium needs no tap on the page for it), because the worker noted the tap. The
 * same link from anywhere else, or a destructive action, lands on the card with Allow focused
 * and a hint, and nothing is signed until the person taps. Deny answers from the notification,
 * unsigned (a deny never lets an agent act).
 */
const web = webTest({ pushAllowHosts: ['127.0.0.1'] })
let receiver: Receiver
let context: BrowserContext
let page: Page
let sw: Worker
let deliver: (data: string) => Promise<void>
let posts: { count(): number }

beforeAll(async () => {
  receiver = startReceiver()
  ;({ context, page, sw, deliver } = await workerPage(web))
  await page.setViewportSize(PHONE)
  await virtualAuthenticator(page)
  await registerPasskey(page, web.server)
  await subscribeReceiver(page, receiver, 'phone')
  posts = answerPosts(page)
})

afterAll(async () => {
  await context?.close()
  receiver?.close()
})

/** The agent asks; the push the server really sent is delivered to the worker. */
async function pushedApproval(
  command: string,
  extra: Record<string, unknown> = {},
): Promise<Asked & { payload: { actions: { action: string; title: string; url?: string }[] } }> {
  const before = receiver.received.length
  const askedAt = Date.now()
  const input = { command }
  const { message } = await web.server.agent.send({
    body: { blocks: [{ type: 'approval', id: 'approval', tool: 'Bash', input, ...extra }] },
  } as never)
  const text = await nextPush(receiver, 'phone', before)
  await deliver(text)
  return { message: message as Message, askedAt, tool: 'Bash', input, payload: JSON.parse(text) }
}

const agentWaits = (id: string) =>
  web.server.agent.ask(id, 25) as Promise<{ message: Message; answer: unknown }>

const focusRefused = 'InvalidAccessError: Not allowed to focus a window.'

describe("an approval's notification", () => {
  test('Allow opens the app at the card, which signs at once: the agent’s check accepts it', async () => {
    const asked = await pushedApproval('npm run build')
    expect(asked.payload.actions.map((a) => a.title)).toEqual(['Allow…', 'Deny'])
    const [shown] = await notifications(sw)
    expect(shown?.actions).toEqual([
      { action: 'allow', title: 'Allow…' },
      { action: 'deny', title: 'Deny' },
    ])
    const got = agentWaits(asked.message.id)
    // The tab is taken to the message (focusing it is what only a real click may do), and
    // with no tap on the page the card signs and answers.
    expect(await click(sw, asked.message.id, 'allow')).toEqual({
      settled: [focusRefused],
      opened: [],
    })
    const answered = await got
    expect(answered.answer).toEqual({ decision: 'allow' })
    expect(await agentCheck(web.server, asked, answered)).toMatchObject({ ok: true })
    const article = page.locator(`article[data-id="${asked.message.id}"]`)
    await article.locator('.ap-outcome.allowed', { hasText: 'signed with a passkey' }).waitFor()
    // `act` leaves the address: a reload asks nothing again.
    await page.waitForFunction(() => !location.search.includes('act='))
    expect(page.url()).toBe(`${web.server.url}/c/${web.server.channelId}#${asked.message.id}`)
  })

  test('Deny answers from the notification, unsigned, and the app is not opened', async () => {
    const asked = await pushedApproval('npm publish')
    const sent = posts.count()
    expect(await click(sw, asked.message.id, 'deny')).toEqual({ settled: ['ok'], opened: [] })
    const answered = await web.server.agent.ask(asked.message.id)
    expect(answered.answer).toEqual({ decision: 'deny' })
    expect(answered.message.ask?.proof).toBeUndefined()
    expect(posts.count()).toBe(sent)
    expect((await notifications(sw)).find((n) => n.tag === asked.message.id)?.body).toBe(
      'Answered: Deny',
    )
  })

  test('the same link from elsewhere only lands on the card: Allow focused, a hint, no prompt', async () => {
    const asked = await pushedApproval('make migrate')
    const sent = posts.count()
    await page.goto(`${web.server.url}/c/${web.server.channelId}?act=allow#${asked.message.id}`)
    const article = page.locator(`article[data-id="${asked.message.id}"]`)
    await article.locator('.sign-hint', { hasText: 'Tap Allow to sign it' }).waitFor()
    const allow = article.getByRole('button', { name: 'Allow', exact: true })
    expect(await allow.evaluate((el) => el === document.activeElement)).toBe(true)
    expect(posts.count()).toBe(sent)
    expect((await web.server.agent.ask(asked.message.id)).message.ask?.status).toBe('open')
    await screenshot(page, 'signing-hint-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'signing-hint-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })
    // The person's own tap (here, Enter on the focused Allow) signs it.
    const got = agentWaits(asked.message.id)
    await page.keyboard.press('Enter')
    const answered = await got
    expect(answered.answer).toEqual({ decision: 'allow' })
    expect(await agentCheck(web.server, asked, answered)).toMatchObject({ ok: true })
  })

  test('a destructive action from the notification waits for a tap on the card', async () => {
    const asked = await pushedApproval('rm -rf build/', { danger: true })
    const sent = posts.count()
    // `click` returns once the tab has been taken to the card: the hint is the new page's.
    await click(sw, asked.message.id, 'allow')
    const article = page.locator(`article[data-id="${asked.message.id}"]`)
    await article.locator('.sign-hint').waitFor()
    expect(posts.count()).toBe(sent)
    expect((await web.server.agent.ask(asked.message.id)).message.ask?.status).toBe('open')
    const got = agentWaits(asked.message.id)
    await article.getByRole('button', { name: 'Allow', exact: true }).click()
    expect((await got).answer).toEqual({ decision: 'allow' })
  })
})
