import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Page } from 'playwright-core'

/**
 * axe-core (from npm) run on a page: its serious and critical WCAG 2.1 A/AA violations, each as
 * its rule, impact and the first elements it names. The same check as axe.test.ts's, for the
 * screens other suites open (the plain-HTTP page, the phone setup).
 */
const AXE = readFileSync(join(import.meta.dir, '../../node_modules/axe-core/axe.min.js'), 'utf8')

interface Violation {
  id: string
  impact: string | null
  help: string
  nodes: { target: string[] }[]
}

export async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol: the app's CSP (script-src 'self') stays as it is.
  await page.evaluate(AXE)
  const found = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(o: object): Promise<{ violations: unknown }> } })
      .axe
    const result = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
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
