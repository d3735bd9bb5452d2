import { describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { createEnrolmentClient } from '../../src/agent/client.ts'
import { axeViolations } from './axe-check.ts'
import { sendEveryBlock } from './fixtures.ts'
import { DESKTOP, PHONE, screenshot, webTest } from './harness.ts'

/**
 * axe-core (from npm, injected by the test) on the app's main screens, phone and desktop, light
 * and dark: no serious or critical violation of WCAG 2.1 A/AA, contrast included. A violation is
 * reported with its rule, impact and the first elements it names, so a failure says what to fix.
 */
const web = webTest({ label: 'Release bot' })

/** The app's own screens: the html embed's frame is the agent's content (it has its own host page). */
const violations = (page: Page) => axeViolations(page, { exclude: [['iframe']] })

async function check(
  path: string,
  size: typeof PHONE,
  scheme: 'light' | 'dark',
  ready: string,
  also: string[] = [],
  /** The phone screenshot's name, to look at what was checked. */
  shot = 'screen',
) {
  const { page, context } = await web.open({ viewport: size })
  try {
    await page.emulateMedia({ colorScheme: scheme })
    await page.goto(`${web.server.url}${path}`)
    await page.locator(ready).filter({ visible: true }).first().waitFor()
    // What the screen must show for its check to cover it (not vacuous).
    for (const selector of also) await page.locator(selector).first().waitFor()
    // Transitions (colour fades, the list's first live answer) settle before colours count.
    await Bun.sleep(400)
    if (size === PHONE) await screenshot(page, `axe-${shot}-phone-${scheme}`)
    return await violations(page)
  } finally {
    await context.close()
  }
}

/**
 * What waits on the person and what is pinned: an open question, an approval and a destructive
 * one (the "Waiting on you" rows on the list, the cards in the thread), and pins with progress
 * (the phone's pins strip). Sent after every block, so they are the thread's newest.
 */
async function sendWaitingAndPins() {
  const agent = web.server.agent
  const approval = (tool: string, input: unknown, danger = false) =>
    ({ type: 'approval', id: 'approval', tool, input, ...(danger ? { danger } : {}) }) as never
  await agent.send({
    body: { title: 'Ship it?', blocks: [{ type: 'confirm', id: 'go', label: 'Ship' }] },
  })
  await agent.send({
    body: {
      title: 'Claude Code wants to edit a file',
      blocks: [approval('Edit', { file_path: '/srv/app.ts', old_string: 'a', new_string: 'b' })],
    },
  })
  await agent.send({
    body: {
      title: 'Claude Code wants to run a command',
      blocks: [approval('Bash', { command: 'rm -rf build' }, true)],
    },
  })
  await agent.pin('tests', {
    body: { title: 'Tests', blocks: [{ type: 'progress', value: 40, max: 120, label: 'tests' }] },
  })
  await agent.pin('deploy', { body: { title: 'Deploy', text: 'waiting for the tests' } })
  // A `hark init` waiting: "Asking to connect" on the list, and its pairing page.
  const started = await createEnrolmentClient({ baseUrl: web.server.url }).startPairing(
    'Laptop',
    'ada-laptop',
  )
  pairingCode = started.user_code
}

let pairingCode = ''

describe('axe-core: no serious or critical violation', () => {
  const screens = (size: typeof PHONE) => [
    // Ready once every kind of "Waiting on you" row shows: question, approval, destructive.
    {
      name: 'channel list with what waits',
      path: '/',
      ready: '.open-ask:not(.danger) >> text=Question',
      also: ['.open-ask.danger', '.open-ask:not(.danger) >> text=Approval', '.pending-pairing'],
    },
    { name: 'pairing page', path: `/pair?code=${pairingCode}`, ready: '.pairing-origin' },
    { name: 'not found', path: '/approvals', ready: 'main h1' },
    {
      name: 'thread with every block, approvals and pins',
      path: `/c/${web.server.channelId}`,
      ready: '.messages .msg',
      // The phone shows pins as the strip; a wide screen in full.
      also: [
        '.approval.danger',
        '.approval:not(.danger)',
        '.question',
        size === PHONE ? '.pin-strip .pin-line' : '.pins article.msg',
      ],
    },
    { name: 'settings', path: '/settings', ready: 'h2, h1' },
    {
      name: 'approval history',
      path: `/c/${web.server.channelId}/approvals`,
      ready: 'main h1, main h2',
    },
  ]

  for (const scheme of ['light', 'dark'] as const) {
    for (const [sizeName, size] of [
      ['phone', PHONE],
      ['desktop', DESKTOP],
    ] as const) {
      test(`${scheme}, ${sizeName}`, async () => {
        if ((await web.server.ctx.store.messages.lastLive(web.server.channelId)) === undefined) {
          await sendEveryBlock(web.server.agent)
          await sendWaitingAndPins()
        }
        const found: Record<string, string[]> = {}
        for (const s of screens(size)) {
          const also = 'also' in s ? s.also : []
          const v = await check(s.path, size, scheme, s.ready, also, s.name.split(' ')[0])
          if (v.length > 0) found[s.name] = v
        }
        expect(found).toEqual({})
      }, 60_000)
    }
  }

  test('the check sees a violation when there is one (it is not vacuous)', async () => {
    const { page, context } = await web.open({ viewport: PHONE, path: '/' })
    try {
      await page.locator('.sidebar').first().waitFor()
      await page.evaluate(() => {
        const p = document.createElement('p')
        p.textContent = 'barely visible'
        p.style.color = '#dddddd'
        p.style.background = '#ffffff'
        document.body.append(p)
      })
      expect((await violations(page)).join('\n')).toContain('color-contrast (serious)')
    } finally {
      await context.close()
    }
  })

  test('the login screen, both themes', async () => {
    for (const scheme of ['light', 'dark'] as const) {
      const context = await web.browser.newContext({ viewport: PHONE })
      try {
        const page = await context.newPage()
        await page.emulateMedia({ colorScheme: scheme })
        await page.goto(web.server.url)
        await page.locator('main.auth').waitFor()
        expect({ scheme, found: await violations(page) }).toEqual({ scheme, found: [] })
      } finally {
        await context.close()
      }
    }
  }, 60_000)
})
