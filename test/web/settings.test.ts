import { beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { createAgentClient } from '../../src/agent/client.ts'
import { addUser } from '../../src/people/service.ts'
import { registrationMode } from '../../src/people/settings.ts'
import { DESKTOP, screenshot, watchErrors, webTest } from './harness.ts'

/** The settings page: tokens, registration and people, each doing what it says. */
const web = webTest({ label: 'CI runner' })
let context: BrowserContext
let page: Page
let errors: string[]

beforeAll(async () => {
  await addUser(web.server.ctx, { email: 'guest@example.com', name: 'Guest' })
  context = await web.context({ viewport: DESKTOP })
  page = await context.newPage()
  errors = watchErrors(page)
  page.on('dialog', (d) => void d.accept())
  await page.goto(`${web.server.url}/settings`)
  await page.getByRole('heading', { name: 'Tokens' }).waitFor()
})

describe('settings', () => {
  test("rotating an agent's token shows the new one once; the old one stops working", async () => {
    await page.getByRole('button', { name: 'Rotate CI runner' }).click()
    const fresh = page.locator('.fresh-token code')
    await fresh.waitFor()
    const token = (await fresh.textContent()) as string
    expect(token).toStartWith('hark_agent_')
    expect((await web.server.agent.raw('GET', '/v1/channel')).status).toBe(401)
    const rotated = createAgentClient({ baseUrl: web.server.url, token })
    expect((await rotated.channel()).channel.label).toBe('CI runner')
    await screenshot(page, 'settings-desktop')

    await page.getByRole('button', { name: 'Revoke CI runner' }).click()
    await page.getByRole('button', { name: 'Revoke CI runner' }).waitFor({ state: 'detached' })
    expect((await rotated.raw('GET', '/v1/channel')).status).toBe(401)
  })

  test('making a person token', async () => {
    await page.getByLabel('Name of the new person token').fill('Backup script')
    await page.getByRole('button', { name: 'Make a person token' }).click()
    await page.locator('.fresh-token', { hasText: 'Backup script' }).waitFor()
    const token = (await page.locator('.fresh-token code').textContent()) as string
    expect(token).toStartWith('hark_person_')
    const me = await fetch(`${web.server.url}/v1/app/me`, {
      headers: { authorization: `Bearer ${token}` },
    })
    expect(me.status).toBe(200)
  })

  test('the owner picks the registration mode and removes a person', async () => {
    await page.getByRole('radio', { name: 'Anyone' }).check()
    for (let i = 0; i < 50 && (await registrationMode(web.server.ctx)) !== 'open'; i++)
      await Bun.sleep(20)
    expect(await registrationMode(web.server.ctx)).toBe('open')
    await page.getByRole('button', { name: 'Remove guest@example.com' }).click()
    await page
      .getByRole('button', { name: 'Remove guest@example.com' })
      .waitFor({ state: 'detached' })
    expect(await web.server.ctx.store.users.byEmail('guest@example.com')).toBeFalsy()
    expect(errors).toEqual([])
  })
})
