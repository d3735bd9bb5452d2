import { beforeAll, describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import type { Message } from '../../src/messages/schema.ts'
import { overflowing } from './fixtures.ts'
import { PHONE, screenshot, webTest } from './harness.ts'
import {
  type Asked,
  type Authenticator,
  agentCheck,
  answerPosts,
  registerPasskey,
  virtualAuthenticator,
} from './signing-fixture.ts'

/**
 * Signed answers on a phone (PRODUCT.md "Trusted answers"): the person has a passkey (Chromium's
 * virtual authenticator, added in Settings); Allow, Allow for this session and Deny each run one
 * passkey prompt, and the proof stored with the answer passes the agent's own check. A request
 * changed on the server is refused with a warning and nothing is sent; a cancelled prompt sends
 * no Allow (and the card can try again), while a Deny then goes unsigned.
 */
const web = webTest({ label: 'Claude Code' })
let page: Page
let errors: string[]
let authenticator: Authenticator
let passkeyName: string
let posts: { count(): number }

const thread = () => `${web.server.url}/c/${web.server.channelId}`

beforeAll(async () => {
  ;({ page, errors } = await web.open({ viewport: PHONE }))
  authenticator = await virtualAuthenticator(page)
  passkeyName = await registerPasskey(page, web.server)
  posts = answerPosts(page)
  await page.goto(thread())
  await page.locator('.messages-inner').waitFor()
})

/** Sends an approval as the agent (as `hark hook claude` does) and waits for its card. */
async function askApproval(
  tool: string,
  input: unknown,
  extra: Record<string, unknown> = {},
): Promise<Asked & { article: Locator }> {
  const askedAt = Date.now()
  const { message } = await web.server.agent.send({
    body: { blocks: [{ type: 'approval', id: 'approval', tool, input, ...extra }] },
  } as never)
  const article = page.locator(`article[data-id="${message.id}"]`)
  await article.locator('.approval').waitFor()
  return { message: message as Message, askedAt, tool, input, article }
}

/** The agent's long-poll on its question, started before the person answers. */
const agentWaits = (id: string) =>
  web.server.agent.ask(id, 25) as Promise<{ message: Message; answer: unknown }>

const button = (article: Locator, name: string) =>
  article.getByRole('button', { name, exact: true })

describe('signing answers with a passkey', () => {
  test('Allow on a Bash approval: one prompt, and the proof passes the agent’s own check', async () => {
    const asked = await askApproval(
      'Bash',
      { command: 'npm test -- --runInBand', description: 'Run the test suite' },
      { summary: 'npm test -- --runInBand', cwd: '/home/dev/shop' },
    )
    // The person has a passkey: no note about answering unsigned.
    expect(await asked.article.locator('.sign-note').count()).toBe(0)
    const signed = await authenticator.signCount()
    const got = agentWaits(asked.message.id)
    await button(asked.article, 'Allow').click()
    const answered = await got
    expect(answered.answer).toEqual({ decision: 'allow' })
    expect(await authenticator.signCount()).toBe(signed + 1)
    expect(answered.message.ask?.proof?.answered_at).toBeGreaterThanOrEqual(asked.askedAt)
    expect(await agentCheck(web.server, asked, answered)).toMatchObject({ ok: true })
    // The same proof says nothing for another answer or another request.
    expect(await agentCheck(web.server, asked, answered, { decision: 'deny' })).toMatchObject({
      ok: false,
    })
    expect(
      await agentCheck(web.server, { ...asked, input: { command: 'rm -rf ~' } }, answered),
    ).toMatchObject({ ok: false })
    await asked.article
      .locator('.ap-outcome.allowed', { hasText: 'Allowed · signed with a passkey' })
      .waitFor()
    await asked.article.evaluate((el) => el.scrollIntoView({ block: 'start' }))
    await screenshot(page, 'signing-allowed-phone')
  })

  test('Allow for this session is signed once, with its scope', async () => {
    const asked = await askApproval(
      'Edit',
      { file_path: '/home/dev/shop/src/app.ts', old_string: 'let a', new_string: 'const a' },
      { scopes: ['once', 'session'] },
    )
    const signed = await authenticator.signCount()
    const got = agentWaits(asked.message.id)
    await button(asked.article, 'Allow for this session').click()
    const answered = await got
    expect(answered.answer).toEqual({ decision: 'allow', scope: 'session' })
    expect(await authenticator.signCount()).toBe(signed + 1)
    expect(await agentCheck(web.server, asked, answered)).toMatchObject({ ok: true })
    // Signed for this session only: not a proof of a plain allow.
    expect(await agentCheck(web.server, asked, answered, { decision: 'allow' })).toMatchObject({
      ok: false,
    })
  })

  test('Deny with a message is signed too, and the agent’s check accepts it', async () => {
    const asked = await askApproval('Bash', { command: 'git push --force origin main' })
    const got = agentWaits(asked.message.id)
    await button(asked.article, 'Deny').click()
    await asked.article.getByLabel('Message to the agent (optional)').fill('Not on main.')
    await button(asked.article, 'Deny').click()
    const answered = await got
    expect(answered.answer).toEqual({ decision: 'deny', message: 'Not on main.' })
    expect(await agentCheck(web.server, asked, answered)).toMatchObject({ ok: true })
    await asked.article
      .locator('.ap-outcome.denied', { hasText: 'signed with a passkey' })
      .waitFor()
  })

  test('a request changed on the server: a red warning, Allow off, nothing signed or sent', async () => {
    const asked = await askApproval('Bash', { command: 'npm run lint' })
    // The server's copy now says something else than the request the agent hashed.
    const body = {
      blocks: [{ type: 'approval', id: 'approval', tool: 'Bash', input: { command: 'rm -rf ~' } }],
    }
    web.server.ctx.db.run('UPDATE messages SET body = ? WHERE id = ?', [
      JSON.stringify(body),
      asked.message.id,
    ])
    await page.reload()
    const article = page.locator(`article[data-id="${asked.message.id}"]`)
    const warning = article.locator('.sign-warning')
    await warning.waitFor()
    expect(await warning.textContent()).toContain(
      'This request was changed on the server; not signed.',
    )
    expect(await article.locator('.ap-shell').textContent()).toBe('rm -rf ~')
    expect(await button(article, 'Allow').isDisabled()).toBe(true)
    const [sent, signed] = [posts.count(), await authenticator.signCount()]
    // A click on it: the element's own click(), as a tap would (a disabled control ignores it;
    // one only made to look disabled would run its handler). Not Playwright's forced click at
    // the button's place on screen: the thread may still be settling its scroll after the
    // reload, and the button be elsewhere by then ("outside of the viewport", a flaky failure).
    await button(article, 'Allow').evaluate((b) => (b as HTMLButtonElement).click())
    expect(posts.count()).toBe(sent)
    expect(await authenticator.signCount()).toBe(signed)
    expect((await web.server.agent.ask(asked.message.id)).message.ask?.status).toBe('open')
    expect(await overflowing(page)).toEqual([])
    await article.evaluate((el) => el.scrollIntoView({ block: 'start' }))
    await screenshot(page, 'signing-changed-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'signing-changed-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })

    // A deny is still sent (unsigned: it never lets the agent act).
    const got = agentWaits(asked.message.id)
    await button(article, 'Deny').click()
    await button(article, 'Deny').click()
    const answered = await got
    expect(answered.answer).toEqual({ decision: 'deny' })
    expect(answered.message.ask?.proof).toBeUndefined()
    expect(await authenticator.signCount()).toBe(signed)
  })

  test('a cancelled prompt sends no Allow and the card can try again; a Deny goes unsigned', async () => {
    const asked = await askApproval('Bash', { command: 'make deploy' })
    await authenticator.setVerified(false)
    const sent = posts.count()
    await button(asked.article, 'Allow').click()
    const notSent = asked.article.locator('.error-note', { hasText: 'Not sent' })
    await notSent.waitFor()
    expect(await notSent.textContent()).toContain('Tap Allow to try again.')
    expect(posts.count()).toBe(sent)
    expect((await web.server.agent.ask(asked.message.id)).message.ask?.status).toBe('open')
    await asked.article.evaluate((el) => el.scrollIntoView({ block: 'start' }))
    await screenshot(page, 'signing-cancelled-phone')

    // The person tries again and verifies this time.
    await authenticator.setVerified(true)
    const got = agentWaits(asked.message.id)
    await button(asked.article, 'Allow').click()
    const answered = await got
    expect(answered.answer).toEqual({ decision: 'allow' })
    expect(await agentCheck(web.server, asked, answered)).toMatchObject({ ok: true })

    // Cancelled on Deny: the deny is sent anyway, unsigned.
    const denied = await askApproval('Bash', { command: 'make release' })
    await authenticator.setVerified(false)
    const gotDeny = agentWaits(denied.message.id)
    await button(denied.article, 'Deny').click()
    await button(denied.article, 'Deny').click()
    const deny = await gotDeny
    expect(deny.answer).toEqual({ decision: 'deny' })
    expect(deny.message.ask?.proof).toBeUndefined()
    await denied.article.locator('.ap-outcome.denied', { hasText: 'unsigned' }).waitFor()
    await authenticator.setVerified(true)
  })

  test('a question asked with proof is signed as a whole answer', async () => {
    const inputs = [
      {
        type: 'choice',
        id: 'env',
        label: 'Deploy where?',
        options: [{ label: 'Staging' }, { label: 'Production', danger: true }],
      },
    ]
    const askedAt = Date.now()
    const { message } = await web.server.agent.send({
      body: { title: 'Release 1.4', blocks: inputs },
      proof: true,
    } as never)
    const asked: Asked = { message: message as Message, askedAt, inputs }
    const article = page.locator(`article[data-id="${message.id}"]`)
    await article.getByRole('button', { name: 'Staging' }).waitFor()
    const got = agentWaits(message.id)
    await article.getByRole('button', { name: 'Staging' }).click()
    const answered = await got
    expect(answered.answer).toBe('Staging')
    expect(await agentCheck(web.server, asked, answered)).toMatchObject({ ok: true })
    await article.locator('.q-outcome-head', { hasText: 'signed with a passkey' }).waitFor()
    expect(await agentCheck(web.server, asked, answered, 'Production')).toMatchObject({
      ok: false,
    })
  })
})

describe('the approval history', () => {
  test('lists the channel’s decisions newest first, with who and how', async () => {
    await page.getByRole('button', { name: 'Manage' }).click()
    await page.getByRole('link', { name: 'Approval history' }).waitFor()
    await screenshot(page, 'thread-manage-menu-phone')
    await page.getByRole('link', { name: 'Approval history' }).click()
    await page.waitForURL(`${thread()}/approvals`)
    const items = page.locator('.history-item')
    await items.first().waitFor()
    const decisions = await page.locator('.history-decision').allTextContents()
    // Newest first: the proof question, the unsigned deny, the retried allow, the changed
    // request's deny, the signed deny, the session allow, the first allow.
    expect(decisions).toEqual([
      'Answered: Staging',
      'Denied',
      'Allowed',
      'Denied',
      'Denied',
      'Allowed for this session',
      'Allowed',
    ])
    const by = await page.locator('.history-by').allTextContents()
    expect(by[2]).toMatch(new RegExp(`^Signed with passkey “${passkeyName}”`))
    expect(by[1]).toBe('Unsigned, in a browser')
    expect(await items.nth(4).locator('.history-message').textContent()).toBe('Not on main.')
    expect(await items.nth(0).locator('.ap-tool').textContent()).toBe('Question')
    expect(await items.nth(1).locator('.ap-tool').textContent()).toBe('Bash')
    expect(await overflowing(page)).toEqual([])
    await screenshot(page, 'approval-history-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'approval-history-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })
    // Each links to its message in the thread.
    await items.nth(1).getByRole('link', { name: 'Show in the thread' }).click()
    await page.locator('article.focused').waitFor()
  })
})

describe('the page', () => {
  test('no console errors along the way', () => {
    expect(errors).toEqual([])
  })
})
