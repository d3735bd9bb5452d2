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

export async function axeViolations(
  page: Page,
  options: { exclude?: string[][] } = {},
): Promise<string[]> {
  // Evaluated through the DevTools protocol: the app's CSP (script-src 'self') stays as it is.
  await page.evaluate(AXE)
  const found = (await page.evaluate(async (exclude) => {
    const axe = (
      window as unknown as {
        axe: { run(context: object, options: object): Promise<{ violations: unknown }> }
      }
    ).axe
    // The thread's messages skip paint off screen (content-visibility: auto). axe reads a text's
    // background from what is painted under it, so a message just outside the viewport showed
    // the page's grey behind its muted time (a contrast failure that came and went with the
    // scroll position): while axe runs, everything is painted.
    // (Through the CSSOM: the app's CSP refuses a <style> element.)
    const skipping = [...document.querySelectorAll<HTMLElement>('*')].filter(
      (el) => getComputedStyle(el).contentVisibility === 'auto',
    )
    for (const el of skipping) el.style.setProperty('content-visibility', 'visible', 'important')
    try {
      const result = await axe.run(
        { exclude: exclude ?? [] },
        { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } },
      )
      return result.violations
    } finally {
      for (const el of skipping) el.style.removeProperty('content-visibility')
    }
  }, options.exclude)) as Violation[]
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
