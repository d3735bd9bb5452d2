import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import type { BrowserContext, Page } from 'playwright-core'
import { createEnrolmentClient } from '../../src/agent/client.ts'
import { registrationMode } from '../../src/people/settings.ts'
import { issueSetupToken, setupTokenFile } from '../../src/people/setup.ts'
import { addVirtualAuthenticator, PHONE, screenshot, watchErrors, webTest } from './harness.ts'

/**
 * First run and logging in, as a person does them: the setup link, a passkey made by
 * Chromium's virtual authenticator, the registration mode, the "connect an agent" step, then a
 * passkey login on a fresh session, and approving `hark init`'s pairing code.
 */
const web = webTest({ owner: false })
let context: BrowserContext
let page: Page
let errors: string[]

beforeAll(async () => {
  context = await web.browser.newContext({ viewport: PHONE, serviceWorkers: 'block' })
  page = await context.newPage()
  errors = watchErrors(page)
  await addVirtualAuthenticator(page)
})

afterAll(async () => {
  await context?.close()
})

describe('first run and login', () => {
  test('a fresh server asks for the setup link', async () => {
    await page.goto(web.server.url)
    await page.getByRole('heading', { name: 'Hark is not set up yet' }).waitFor()
    await page.goto(`${web.server.url}/setup`)
    await page.getByText('Open the setup link').waitFor()
  })

  test('setup: owner with a passkey, registration mode, then connect the first agent', async () => {
    const link = (await issueSetupToken(web.server.ctx)) as string
    await page.goto(link)
    // The token leaves the address bar at once.
    await page.waitForFunction(() => location.href.endsWith('/setup'))
    await page.getByLabel('Email').fill('owner@example.com')
    await page.getByLabel('Your name').fill('Ada')
    await screenshot(page, 'setup-owner-phone')
    await page.getByRole('button', { name: 'Create owner with a passkey' }).click()
    await page.getByRole('heading', { name: 'Who can create an account?' }).waitFor()
    const owner = await web.server.ctx.store.users.byEmail('owner@example.com')
    expect(owner?.is_owner).toBe(1)
    expect(await web.server.ctx.store.passkeys.byUser(owner?.id as string)).toHaveLength(1)
    expect(existsSync(setupTokenFile(web.server.ctx))).toBe(false)

    await page.getByRole('radio', { name: /By invite/ }).check()
    await page.getByRole('button', { name: 'Continue' }).click()
    // Notifications are offered next (headless Chromium has no push service; skip ahead).
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    expect(
      await page.getByRole('button', { name: 'Turn on notifications on this device' }).count(),
    ).toBe(1)
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Connect your first agent' }).waitFor()
    expect(await registrationMode(web.server.ctx)).toBe('invite')
    expect(await page.locator('.copy-text code').first().textContent()).toBe(
      `hark init ${web.server.url}`,
    )
    await page.getByRole('button', { name: 'Make a join link' }).click()
    const join = page.locator('.copy-text code', { hasText: 'hark join' })
    await join.waitFor()
    const command = (await join.textContent()) as string
    expect(command).toMatch(new RegExp(`^hark join ${web.server.url}/join#\\w+$`))
    await screenshot(page, 'setup-connect-phone')
    // The link works for an agent.
    const code = command.split('#')[1] as string
    const joined = await createEnrolmentClient({ baseUrl: web.server.url }).join(code)
    expect(joined.token).toStartWith('hark_agent_')

    await page.getByRole('button', { name: 'Open Hark' }).click()
    await page.locator('.channel', { hasText: 'Agent' }).waitFor()
  })

  test('logging in with the passkey, after logging out', async () => {
    await page.goto(`${web.server.url}/settings`)
    await page.getByRole('button', { name: 'Log out', exact: true }).click()
    await page.getByRole('button', { name: 'Log in with a passkey' }).waitFor()
    expect(await context.cookies(web.server.url)).toEqual([])
    // A setup link is no way back in once there is an owner.
    await page.goto(`${web.server.url}/setup#token=anything`)
    await page.getByText('Setup is done').waitFor()
    await page.goto(web.server.url)
    await screenshot(page, 'login-phone')
    await page.getByRole('button', { name: 'Log in with a passkey' }).click()
    await page.locator('.channel', { hasText: 'Agent' }).waitFor()
    const cookies = await context.cookies(web.server.url)
    expect(cookies.map((c) => c.name)).toEqual(['hark_session'])
    expect(cookies[0]?.httpOnly).toBe(true)
  })

  test("approving `hark init`'s pairing code names the new agent", async () => {
    const cli = createEnrolmentClient({ baseUrl: web.server.url })
    const started = await cli.startPairing('laptop')
    const polled = cli.pollPairing(started.device_code, 10)
    await page.goto(started.verification_uri_complete)
    await page.getByText(started.user_code).waitFor()
    await page.getByLabel('Name this agent').fill('Laptop agent')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.getByText('is connected').waitFor()
    const result = await polled
    expect(result.status).toBe('approved')
    expect(result.status === 'approved' && result.channel.label).toBe('Laptop agent')
    await page.getByRole('link', { name: 'Open Laptop agent' }).click()
    await page.locator('.thread-head h2', { hasText: 'Laptop agent' }).waitFor()
    expect(errors).toEqual([])
  })
})
