import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { sendEveryBlock } from './fixtures.ts'
import { DESKTOP, PHONE, webTest } from './harness.ts'

/**
 * axe-core (from npm, injected by the test) on the app's main screens, phone and desktop, light
 * and dark: no serious or critical violation of WCAG 2.1 A/AA, contrast included. A violation is
 * reported with its rule, impact and the first elements it names, so a failure says what to fix.
 */
const AXE = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')

const web = webTest({ label: 'Release bot' })

interface Violation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[] }[]
}

async function violations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the app's CSP (script-src 'self') stays as it is.
  await page.evaluate(AXE)
  const found = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(o: object): Promise<{ violations: unknown }> } })
      .axe
    const result = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      // The html embed's frame is the agent's content, not the app's (it has its own host page).
      exclude: [['iframe']],
    })
    return result.violations
  })) as Violation[]
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .slice(0, 3)
          .map((n) => n.target.join(' '))
          .join(', ')}`,
    )
}

async function check(path: string, size: typeof PHONE, scheme: 'light' | 'dark', ready: string) {
  const { page, context } = await web.open({ viewport: size })
  try {
    await page.emulateMedia({ colorScheme: scheme })
    await page.goto(`${web.server.url}${path}`)
    await page.locator(ready).filter({ visible: true }).first().waitFor()
    // Transitions (colour fades, the list's first live answer) settle before colours count.
    await Bun.sleep(400)
    return await violations(page)
  } finally {
    await context.close()
  }
}

describe('axe-core: no serious or critical violation', () => {
  const screens = () => [
    { name: 'channel list', path: '/', ready: '.channel-list, .sidebar' },
    {
      name: 'thread with every block',
      path: `/c/${web.server.channelId}`,
      ready: '.messages .msg',
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
        }
        const found: Record<string, string[]> = {}
        for (const s of screens()) {
          const v = await check(s.path, size, scheme, s.ready)
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
