import { beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Locator, Page } from 'playwright-core'
import { inputBlocks, splitOptions } from '../../src/agent/bodies.ts'
import type { SendRequest } from '../../src/messages/schema.ts'
import { PHONE, screenshot, webTest } from './harness.ts'

const web = webTest({ label: 'Release bot' })
let context: BrowserContext
let page: Page
let errors: string[]

beforeAll(async () => {
  ;({ context, page, errors } = await web.open({ path: `/c/${web.server.channelId}` }))
  await page.locator('.messages-inner').waitFor()
})

/** Sends a question as the agent and returns it with its article in the page. */
async function ask(req: SendRequest): Promise<{ id: string; article: Locator }> {
  const { message } = await web.server.agent.send(req)
  const article = page.locator(`article[data-id="${message.id}"]`)
  await article.waitFor()
  return { id: message.id, article }
}

const answerOf = async (id: string) => (await web.server.agent.ask(id)).message.ask

describe('questions: one simple input answers on pick', () => {
  test('a single choice submits the picked option', async () => {
    const { id, article } = await ask({
      body: {
        title: 'Where to deploy?',
        blocks: [
          {
            type: 'choice',
            id: 'env',
            options: [
              { label: 'Staging', value: 'staging', description: 'Safe to break' },
              { label: 'Production', value: 'prod', danger: true },
            ],
          },
        ],
      },
    })
    expect(await article.getByRole('button', { name: 'Send' }).count()).toBe(0)
    await article.getByRole('button', { name: /Staging/ }).click()
    await article.locator('.q-outcome.answered').waitFor()
    expect(await article.locator('.q-outcome dd').textContent()).toBe('Staging')
    const askInfo = await answerOf(id)
    expect(askInfo?.status).toBe('answered')
    expect(askInfo?.answer).toBe('staging')
  })

  test('a single choice with "other" sends the typed answer', async () => {
    const { id, article } = await ask({
      body: {
        title: 'Codename?',
        blocks: [{ type: 'choice', id: 'name', other: true, options: [{ label: 'Falcon' }] }],
      },
    })
    await article.getByLabel('Other answer').fill('Heron')
    await article.getByRole('button', { name: 'Send' }).click()
    await article.locator('.q-outcome.answered').waitFor()
    expect((await answerOf(id))?.answer).toBe('Heron')
  })

  test('a confirm submits true when pressed', async () => {
    const { id, article } = await ask({
      body: {
        title: 'Drop the old tables?',
        blocks: [
          {
            type: 'confirm',
            id: 'drop',
            label: 'Drop them',
            description: 'This cannot be undone.',
            danger: true,
          },
        ],
      },
    })
    const button = article.getByRole('button', { name: 'Drop them' })
    expect(await button.getAttribute('class')).toContain('danger')
    await button.click()
    await article.locator('.q-outcome.answered').waitFor()
    expect((await answerOf(id))?.answer).toBe(true)
  })

  test('an html question stages what the embed passes to reply(); the app sends it', async () => {
    const { id, article } = await ask({
      body: {
        title: 'Pick a colour',
        blocks: [
          {
            type: 'html',
            id: 'colour',
            question: true,
            html: '<button id="teal" onclick="reply({ colour: \'teal\' })">Teal</button>',
          },
        ],
      },
    })
    // Once the embed has settled to its content's height (it starts taller, and the thread,
    // kept at its bottom, moves as it shrinks): a click aimed before that can miss.
    await page.waitForFunction((mid) => {
      const frame = document.querySelector<HTMLIFrameElement>(`article[data-id="${mid}"] iframe`)
      return frame !== null && frame.style.height !== '' && frame.style.height !== '120px'
    }, id)
    await page
      .frameLocator(`article[data-id="${id}"] iframe`)
      .getByRole('button', { name: 'Teal' })
      .click()
    await article.locator('.q-staged-value', { hasText: '{ "colour": "teal" }' }).waitFor()
    await article.getByRole('button', { name: 'Send', exact: true }).click()
    await article.locator('.q-outcome.answered').waitFor()
    expect((await answerOf(id))?.answer).toEqual({ colour: 'teal' })
  })
})

describe('questions: several inputs share one Send button', () => {
  test('every input type, required ones enforced before anything is sent', async () => {
    const { id, article } = await ask({
      body: {
        title: 'Release 2.0',
        text: 'A few things before I tag it.',
        blocks: [
          { type: 'markdown', text: 'The **changelog** is ready.' },
          {
            type: 'choice',
            id: 'checks',
            label: 'Checks to run',
            multi: true,
            required: true,
            options: [{ label: 'Lint' }, { label: 'Tests' }, { label: 'Benchmarks' }],
          },
          {
            type: 'choice',
            id: 'channel',
            label: 'Channel',
            other: true,
            options: [{ label: 'Stable', value: 'stable' }, { label: 'Beta' }],
          },
          {
            type: 'text_input',
            id: 'notes',
            label: 'Release notes',
            multiline: true,
            required: true,
            placeholder: 'What changed',
          },
          { type: 'number_input', id: 'replicas', label: 'Replicas', min: 1, max: 5 },
          { type: 'toggle', id: 'notify', label: 'Notify the team', default: true },
          { type: 'confirm', id: 'diff', label: 'I checked the diff' },
        ],
      },
    })
    const send = article.getByRole('button', { name: 'Send' })
    expect(await send.count()).toBe(1)
    await screenshot(page, 'question-form-desktop')

    // Nothing filled: the required inputs say so, and nothing reaches the server.
    await send.click()
    await article.locator('.field-error').first().waitFor()
    const shown = await article.locator('.field-error').allTextContents()
    expect(shown).toContain('Pick at least one.')
    expect(shown).toContain('This is required.')
    expect((await answerOf(id))?.status).toBe('open')
    expect(await page.evaluate(() => document.activeElement?.getAttribute('type') ?? '')).toBe(
      'checkbox',
    )

    // Out of range is caught too.
    await article.getByRole('checkbox', { name: 'Lint' }).check()
    await article.getByRole('checkbox', { name: 'Tests' }).check()
    await article.getByLabel('Release notes').fill('Faster start.\nFewer bugs.')
    await article.getByLabel('Replicas').fill('9')
    await send.click()
    await article.getByText('At most 5.').waitFor()
    expect((await answerOf(id))?.status).toBe('open')

    await article.getByLabel('Replicas').fill('3')
    await article.getByLabel('Channel: other').fill('nightly')
    await article.getByRole('switch', { name: 'Notify the team' }).uncheck()
    await article.getByRole('button', { name: 'I checked the diff' }).click()
    await send.click()
    await article.locator('.q-outcome.answered').waitFor()
    expect((await answerOf(id))?.answer).toEqual({
      checks: ['Lint', 'Tests'],
      channel: 'nightly',
      notes: 'Faster start.\nFewer bugs.',
      replicas: 3,
      notify: false,
      diff: true,
    })
    const summary = await article.locator('.q-outcome dd').allTextContents()
    expect(summary).toEqual([
      'Lint, Tests',
      'nightly',
      'Faster start.\nFewer bugs.',
      '3',
      'Off',
      'Confirmed',
    ])
  })

  test('one input that is not simple (a text) still waits for Send', async () => {
    const { id, article } = await ask({
      body: { title: 'Commit message?', blocks: [{ type: 'text_input', id: 'msg' }] },
    })
    await article.getByLabel('Answer').fill('fix: flaky test')
    await article.getByRole('button', { name: 'Send' }).click()
    await article.locator('.q-outcome.answered').waitFor()
    expect((await answerOf(id))?.answer).toBe('fix: flaky test')
  })

  test('a multi choice alone also uses Send', async () => {
    const { id, article } = await ask({
      body: {
        title: 'Which platforms?',
        blocks: [
          {
            type: 'choice',
            id: 'os',
            multi: true,
            options: [{ label: 'Linux' }, { label: 'macOS' }],
          },
        ],
      },
    })
    await article.getByRole('checkbox', { name: 'macOS' }).check()
    await article.getByRole('button', { name: 'Send' }).click()
    await article.locator('.q-outcome.answered').waitFor()
    expect((await answerOf(id))?.answer).toEqual(['macOS'])
  })
})

describe('questions: final states', () => {
  test('expired shows the defaults the agent got', async () => {
    const { article } = await ask({
      body: {
        title: 'Restart the worker?',
        blocks: [
          {
            type: 'choice',
            id: 'restart',
            default: 'later',
            options: [
              { label: 'Now', value: 'now' },
              { label: 'Tonight', value: 'later' },
            ],
          },
        ],
      },
      expires_in: 1,
    })
    await article.locator('.q-outcome.expired').waitFor({ timeout: 8000 })
    expect(await article.locator('.q-outcome-head').textContent()).toContain('Expired')
    expect(await article.locator('.q-outcome dd').textContent()).toBe('Tonight')
    expect(await article.locator('button.q-option').count()).toBe(0)
  })

  test('cancelled says so and takes no answer', async () => {
    const { id, article } = await ask({
      body: { title: 'Rotate the keys?', blocks: [{ type: 'confirm', id: 'ok', label: 'Rotate' }] },
    })
    await web.server.agent.cancel(id)
    await article.locator('.q-outcome.cancelled').waitFor()
    expect(await article.getByRole('button', { name: 'Rotate' }).count()).toBe(0)
  })

  test('a question answered elsewhere closes here too, live', async () => {
    const { id, article } = await ask({
      body: { title: 'Merge?', blocks: [{ type: 'confirm', id: 'ok', label: 'Merge' }] },
    })
    await web.server.ctx.store.messages.byId(id) // exists
    const res = await fetch(`${web.server.url}/v1/app/messages/${id}/answer`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: await cookieHeader() },
      body: JSON.stringify({ answer: true }),
    })
    expect(res.status).toBe(403) // a cookie write without our Origin is refused (CSRF)
    const ok = await fetch(`${web.server.url}/v1/app/messages/${id}/answer`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: await cookieHeader(),
        origin: web.server.url,
      },
      body: JSON.stringify({ answer: true }),
    })
    expect(ok.status).toBe(200)
    await article.locator('.q-outcome.answered').waitFor()
  })

  test('no console errors or CSP violations along the way; phone screenshot', async () => {
    await page.setViewportSize(PHONE)
    await ask({
      body: {
        title: 'Ship 2.0 to production?',
        text: 'All checks passed on staging.',
        blocks: [
          {
            type: 'choice',
            id: 'when',
            options: [
              { label: 'Ship now', value: 'now', description: 'Starts the rollout at once' },
              { label: 'Tonight at 22:00', value: 'tonight' },
              { label: 'Not yet', value: 'no', danger: true },
            ],
          },
        ],
      },
    })
    await screenshot(page, 'question-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'question-phone-dark')
    expect(errors).toEqual([])
  })
})

describe('questions: the answered card names inputs by label, never by id', () => {
  test('`hark ask --choice yes,no` answered: the card shows "yes", not "choice yes"', async () => {
    // Exactly what the CLI sends: a choice with the id `choice` and no label of its own.
    const blocks = inputBlocks({ choices: [{ options: splitOptions('yes,no') }] })
    const { article } = await ask({ body: { title: 'Deploy to prod?', blocks } })
    await article.getByRole('button', { name: 'yes' }).click()
    await article.locator('.q-outcome.answered').waitFor()
    expect(await article.locator('.q-outcome dd').textContent()).toBe('yes')
    expect(await article.locator('.q-outcome dl').textContent()).not.toContain('choice')
    // A screen reader still hears what the value is; the eye sees only the value.
    const term = article.locator('.q-outcome dt')
    expect(await term.textContent()).toBe('Answer')
    expect((await term.boundingBox())?.width).toBeLessThanOrEqual(1)
    await page.setViewportSize(PHONE)
    await article.scrollIntoViewIfNeeded()
    await screenshot(page, 'question-answered-unlabelled-phone')
    await page.emulateMedia({ colorScheme: 'dark' })
    await screenshot(page, 'question-answered-unlabelled-phone-dark')
    await page.emulateMedia({ colorScheme: 'light' })
  })

  test('several inputs without labels are named by their kind', async () => {
    const blocks = inputBlocks({
      choices: [{ options: ['eu', 'us'] }, { options: ['small', 'large'] }],
      confirms: ['Ship it'],
    })
    const { article } = await ask({ body: { title: 'Where and how big?', blocks } })
    await article.getByRole('radio', { name: 'eu' }).check()
    await article.getByRole('radio', { name: 'large' }).check()
    await article.getByRole('button', { name: 'Ship it' }).click()
    await article.getByRole('button', { name: 'Send' }).click()
    await article.locator('.q-outcome.answered').waitFor()
    expect(await article.locator('.q-outcome dt').allTextContents()).toEqual([
      'Choice',
      'Choice',
      'Ship it',
    ])
    expect(await article.locator('.q-outcome dl').textContent()).not.toContain('choice_2')
  })
})

async function cookieHeader(): Promise<string> {
  const cookies = await context.cookies(web.server.url)
  return cookies.map((c) => `${c.name}=${c.value}`).join('; ')
}
