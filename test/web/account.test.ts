import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { startSession } from '../../src/access/sessions/service.ts'
import { createInvite } from '../../src/people/invites.ts'
import { addUser } from '../../src/people/service.ts'
import { setRegistrationMode } from '../../src/people/settings.ts'
import type { UserRow } from '../../src/people/store.ts'
import { type MailTrap, startMailTrap } from '../email/mail-trap.ts'
import { addVirtualAuthenticator, PHONE, screenshot, watchErrors, webTest } from './harness.ts'

/**
 * Getting in and managing one's own access, as a person does it: email codes through a real
 * SMTP listener, an invite link with a passkey, passkeys and sessions in settings.
 */
let trap: MailTrap
beforeAll(async () => {
  trap = await startMailTrap()
})
const web = webTest(() => ({ owner: false, mailer: trap }))
const contexts: BrowserContext[] = []

beforeAll(async () => {
  await addUser(web.server.ctx, { email: 'owner@example.com', owner: true })
})

afterAll(async () => {
  for (const c of contexts) await c.close()
  await trap?.close()
})

async function freshPage(): Promise<{ page: Page; errors: string[] }> {
  const context = await web.browser.newContext({ viewport: PHONE, serviceWorkers: 'block' })
  contexts.push(context)
  const page = await context.newPage()
  page.on('dialog', (d) => void d.accept())
  return { page, errors: watchErrors(page) }
}

const owner = async () => (await web.server.ctx.store.users.byEmail('owner@example.com')) as UserRow

describe('email codes', () => {
  test('logging in with a code from the email', async () => {
    const { page, errors } = await freshPage()
    await page.goto(web.server.url)
    await page.getByLabel('Email').fill('owner@example.com')
    await page.getByRole('button', { name: 'Email me a code' }).click()
    const mail = await trap.next('owner@example.com', 5000)
    expect(mail.code).toMatch(/^\d{8}$/)
    await page.getByLabel('Code from the email').fill(mail.code)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('link', { name: 'Connect an agent' }).waitFor()
    expect(errors).toEqual([])
  })

  test('no passkey on this device: the emailed code is offered under that heading, both themes', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const { page } = await freshPage()
      await page.emulateMedia({ colorScheme: scheme })
      await page.goto(web.server.url)
      const help = page.getByRole('region', { name: 'No passkey on this device?' })
      await help.getByRole('button', { name: 'Email me a code' }).waitFor()
      // An email server: the code is the way in, not a link from the owner.
      expect(await help.textContent()).not.toContain('hark admin user link')
      await screenshot(page, `login-email-phone-${scheme}`)
    }
  })

  test('a wrong code is refused with a message; the right one still works', async () => {
    const { page } = await freshPage()
    await page.goto(web.server.url)
    await page.getByLabel('Email').fill('owner@example.com')
    await page.getByRole('button', { name: 'Email me a code' }).click()
    const mail = await trap.next('owner@example.com', 5000)
    await page
      .getByLabel('Code from the email')
      .fill(mail.code === '00000000' ? '11111111' : '00000000')
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('alert').waitFor()
    await page.getByLabel('Code from the email').fill(mail.code)
    await page.getByRole('button', { name: 'Log in', exact: true }).click()
    await page.getByRole('link', { name: 'Connect an agent' }).waitFor()
  })

  test('signing up with an emailed code while registration is open', async () => {
    await setRegistrationMode(web.server.ctx, 'open')
    const { page, errors } = await freshPage()
    await page.goto(`${web.server.url}/signup`)
    await page.getByLabel('Email').fill('new@example.com')
    await page.getByLabel('Your name').fill('Newcomer')
    await page.getByRole('button', { name: 'Use an emailed code instead' }).click()
    await page.getByRole('button', { name: 'Email me a code' }).click()
    const mail = await trap.next('new@example.com', 5000)
    await page.getByLabel('Code from the email').fill(mail.code)
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.getByRole('link', { name: 'Connect an agent' }).waitFor()
    expect((await web.server.ctx.store.users.byEmail('new@example.com'))?.name).toBe('Newcomer')
    await setRegistrationMode(web.server.ctx, 'closed')
    expect(errors).toEqual([])
  })
})

describe('invites', () => {
  test('signing up through /invite#CODE with a passkey, while registration is by invite', async () => {
    await setRegistrationMode(web.server.ctx, 'invite')
    // Made as the app makes it: from the owner's browser session (a token may not invite).
    const { session } = await startSession(web.server.ctx, await owner(), 'test-browser')
    const { invite } = await createInvite(web.server.ctx, { user: await owner(), session }, {})
    const { page, errors } = await freshPage()
    await addVirtualAuthenticator(page)
    await page.goto(invite.link)
    await page.getByRole('heading', { name: 'Join Hark' }).waitFor()
    await page.getByLabel('Email').fill('invited@example.com')
    await page.getByRole('button', { name: 'Create account with a passkey' }).click()
    await page.getByRole('link', { name: 'Connect an agent' }).waitFor()
    const user = await web.server.ctx.store.users.byEmail('invited@example.com')
    expect(await web.server.ctx.store.passkeys.byUser(user?.id as string)).toHaveLength(1)
    // The invite is used up: the same link no longer signs anyone up.
    const again = await freshPage()
    await addVirtualAuthenticator(again.page)
    await again.page.goto(invite.link)
    await again.page.getByLabel('Email').fill('second@example.com')
    await again.page.getByRole('button', { name: 'Create account with a passkey' }).click()
    await again.page.getByRole('alert').waitFor()
    expect(await web.server.ctx.store.users.byEmail('second@example.com')).toBeFalsy()
    expect(errors).toEqual([])
  })
})

describe('settings: passkeys and sessions', () => {
  test('adding, renaming and removing a passkey', async () => {
    const context = await web.context({ viewport: PHONE })
    contexts.push(context)
    const page = await context.newPage()
    await addVirtualAuthenticator(page)
    let answer = 'Work phone'
    page.on('dialog', (d) => void (d.type() === 'prompt' ? d.accept(answer) : d.accept()))
    await page.goto(`${web.server.url}/settings`)
    const section = page.getByRole('region', { name: 'Passkeys' })
    await section.getByRole('button', { name: 'Add a passkey on this device' }).click()
    await section.locator('li').first().waitFor()
    expect(await web.server.ctx.store.passkeys.byUser((await owner()).id)).toHaveLength(1)
    const name = (await web.server.ctx.store.passkeys.byUser((await owner()).id))[0]?.name as string
    await section.getByRole('button', { name: `Rename ${name}` }).click()
    await section.getByText('Work phone').waitFor()
    answer = ''
    await section.getByRole('button', { name: 'Remove Work phone' }).click()
    await section.getByText('Work phone').waitFor({ state: 'detached' })
    expect(await web.server.ctx.store.passkeys.byUser((await owner()).id)).toHaveLength(0)
  })

  test('ending another session, then logging out everywhere', async () => {
    const other = await startSession(
      web.server.ctx,
      await owner(),
      'Mozilla/5.0 (Linux; Android 14) Chrome/120',
    )
    const context = await web.context({ viewport: PHONE })
    contexts.push(context)
    const page = await context.newPage()
    page.on('dialog', (d) => void d.accept())
    await page.goto(`${web.server.url}/settings`)
    const section = page.getByRole('region', { name: 'Sessions' })
    const row = section.locator('li', { hasText: 'Chrome on Android' })
    await row.getByRole('button', { name: 'Log out' }).click()
    await row.waitFor({ state: 'detached' })
    expect(
      (await web.server.ctx.store.sessions.byUser((await owner()).id)).map((x) => x.id),
    ).not.toContain(other.session.id)

    const third = await web.context({ viewport: PHONE })
    contexts.push(third)
    await page.getByRole('button', { name: 'Log out everywhere' }).click()
    await page.getByRole('button', { name: 'Log in with a passkey' }).waitFor()
    const me = await third.request.get(`${web.server.url}/v1/app/me`)
    expect(me.status()).toBe(401)
  })
})
