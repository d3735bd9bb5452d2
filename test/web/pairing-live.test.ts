import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { createEnrolmentClient } from '../../src/agent/client.ts'
import { issueSetupToken } from '../../src/people/setup.ts'
import { addVirtualAuthenticator, PHONE, screenshot, watchErrors, webTest } from './harness.ts'

/**
 * A pending `hark init` (issue 28, items 7 and 9): it appears live, without a reload, on the
 * setup wizard's "Connect an agent" step and on Home, with where it comes from (the machine's
 * name, its address, when); its pairing page says the same. Only the owner is shown them.
 * Each step at 390x844 in both themes.
 */
const web = webTest({ owner: false })

/** `hark init` as the CLI starts it: a label, this machine's name. */
const startInit = (host: string, label?: string) =>
  createEnrolmentClient({ baseUrl: web.server.url }).startPairing(label, host)

async function bothThemes(page: Page, name: string) {
  await screenshot(page, `${name}-phone-light`)
  await page.emulateMedia({ colorScheme: 'dark' })
  await screenshot(page, `${name}-phone-dark`)
  await page.emulateMedia({ colorScheme: 'light' })
}

describe('pending pairings, live', () => {
  test('setup wizard, "Connect an agent": a hark init appears as it starts; approved in place', async () => {
    const context = await web.browser.newContext({ viewport: PHONE, serviceWorkers: 'block' })
    const page = await context.newPage()
    const errors = watchErrors(page)
    await addVirtualAuthenticator(page)
    await page.goto((await issueSetupToken(web.server.ctx)) as string)
    await page.getByLabel('Email').fill('owner@example.com')
    await page.getByRole('button', { name: 'Create owner with a passkey' }).click()
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Notifications' }).waitFor()
    await page.getByRole('button', { name: 'Continue' }).click()
    await page.getByRole('heading', { name: 'Connect your first agent' }).waitFor()
    expect(await page.locator('.pending-pairings').count()).toBe(0)

    // The terminal runs `hark init`: the step shows it without a reload.
    const started = await startInit('ada-laptop', 'Laptop')
    const item = page.locator('.pending-pairing', { hasText: started.user_code })
    await item.waitFor()
    expect(await item.textContent()).toContain('from ada-laptop (127.0.0.1)')
    expect(await item.textContent()).toContain('Laptop')
    expect(await item.locator('time').textContent()).toBe('just now')
    await bothThemes(page, 'setup-pending-pairing')

    await item.click()
    await page.getByLabel('Name this agent').waitFor()
    expect(await page.locator('.pairing-origin').textContent()).toContain('ada-laptop')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.getByText('is connected').waitFor()
    // Answered: gone from the list.
    await page.locator('.pending-pairings').waitFor({ state: 'detached' })
    const token = await createEnrolmentClient({ baseUrl: web.server.url }).pollPairing(
      started.device_code,
    )
    expect(token.status).toBe('approved')
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  test('Home: a hark init appears live with where it comes from; its page says it in full', async () => {
    const { page, errors, context } = await web.open({ viewport: PHONE, path: '/' })
    await page.locator('.channel-list').waitFor()
    expect(await page.locator('.pending-pairings').count()).toBe(0)
    const started = await startInit('build-box.internal')
    const item = page.locator('.pending-pairing', { hasText: started.user_code })
    await item.waitFor()
    expect(await item.textContent()).toContain('from build-box.internal (127.0.0.1)')
    expect(await page.locator('#pending-pairings-head').textContent()).toContain(
      'Asking to connect',
    )
    await bothThemes(page, 'home-pending-pairing')

    // Item 9: the pairing page says where the request came from.
    await item.click()
    await page.waitForURL(`${web.server.url}/pair?code=${started.user_code}`)
    const origin = page.locator('.pairing-origin')
    await origin.waitFor()
    const rows = await origin.locator('div').allInnerTexts()
    expect(rows[0]?.replace(/\s+/g, ' ')).toBe('Machine build-box.internal')
    expect(rows[1]?.replace(/\s+/g, ' ')).toBe('Address 127.0.0.1')
    expect(rows[2]).toContain('just now')
    await bothThemes(page, 'pair-origin')
    await page.getByRole('button', { name: 'Deny' }).click()
    await page.getByText('Denied').waitFor()
    await page.goto(web.server.url)
    await page.locator('.channel-list').waitFor()
    expect(await page.locator('.pending-pairings').count()).toBe(0)
    expect(errors).toEqual([])
    await context.close()
  }, 60_000)

  test('a person who is not the owner is not shown pending pairings, nor asks for them', async () => {
    await web.server.addPerson('member@example.com')
    const { page, context } = await web.open({ viewport: PHONE, email: 'member@example.com' })
    const asked: string[] = []
    page.on('request', (r) => {
      if (new URL(r.url()).pathname === '/v1/app/pairings') asked.push(r.url())
    })
    await startInit('someone-else')
    await page.goto(web.server.url)
    await page.getByText('No agents yet.').waitFor()
    expect(await page.locator('.pending-pairings').count()).toBe(0)
    expect(asked).toEqual([])
    await context.close()
  })
})
