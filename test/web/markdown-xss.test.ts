import { beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { iconPng } from '../../scripts/web-icons.ts'
import { webTest } from './harness.ts'

/**
 * Markdown is the agent's to write and the person's browser renders it: nothing in it may run.
 * The sanitizer must remove every vector before the CSP would have to step in, so a CSP
 * violation in the page counts as a failure too. (Chromium also logs a CSP error when the
 * sanitizer parses `<img onerror>` into its inert document: nothing runs there, scripting is
 * off in it, so those console lines are not counted; violations in the page itself are.)
 */
const VECTORS = [
  '[plain](javascript:alert(1))',
  '[mixed case](JaVaScRiPt:alert(1))',
  '[entity](&#106;avascript:alert(1))',
  '[hex entity](&#x6A;avascript&#x3A;alert(1))',
  '[tab](java\tscript:alert(1))',
  '[encoded tab](java&#x09;script:alert(1))',
  '[percent](%6Aavascript:alert(1))',
  '[spaces](  javascript:alert(1))',
  '[data](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[vbscript](vbscript:msgbox(1))',
  '<javascript:alert(1)>',
  '![img](javascript:alert(1))',
  '<a href="javascript:alert(1)">raw</a>',
  '<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">padded entities</a>',
  '<a href=" &#14;  javascript:alert(1)">control char</a>',
  '<a href="jav&#x0A;ascript:alert(1)">newline entity</a>',
  '<img src=x onerror=alert(1)>',
  '<img src="https://images.example.com/x.png" onerror="alert(1)">',
  '<svg onload=alert(1)>',
  '<svg><script>alert(1)</script></svg>',
  '<svg><a xlink:href="javascript:alert(1)"><text y="20">svg link</text></a></svg>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<iframe src="javascript:alert(1)"></iframe>',
  '<iframe srcdoc="<script>parent.alert(1)</script>"></iframe>',
  '<object data="javascript:alert(1)"></object>',
  '<embed src="javascript:alert(1)">',
  '<details open ontoggle=alert(1)><summary>x</summary></details>',
  '<form action="javascript:alert(1)"><button>go</button></form>',
  '<div style="background:url(javascript:alert(1))">styled</div>',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<base href="javascript:alert(1)//">',
  '<script>alert(1)</script>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>"></noscript>',
  '[safe link](https://safe.example/ok)',
  'mail [ops](mailto:ops@example.com)',
  'press <kbd>Ctrl</kbd> and <b>hold</b>',
]

const web = webTest({ label: 'Markdown bot' })
let context: BrowserContext
let page: Page
const dialogs: string[] = []
const pageErrors: string[] = []
const outbound: string[] = []

beforeAll(async () => {
  context = await web.context()
  // Nothing may leave loopback: remote images are answered here, and recorded.
  await context.route(/^https?:\/\/(?!localhost)/, (route) => {
    outbound.push(route.request().url())
    return route.fulfill({
      status: 200,
      contentType: 'image/png',
      body: Buffer.from(iconPng(32, false)),
    })
  })
  page = await context.newPage()
  page.on('dialog', (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  page.on('pageerror', (e) => pageErrors.push(e.message))
  await page.addInitScript(() => {
    const w = window as unknown as { violations: string[] }
    w.violations = []
    document.addEventListener('securitypolicyviolation', (e) =>
      w.violations.push(`${e.violatedDirective} ${e.blockedURI}`),
    )
  })
  await page.goto(`${web.server.url}/c/${web.server.channelId}`)
  await page.locator('.messages-inner').waitFor()
})

describe('markdown', () => {
  test('no XSS vector runs, in text or raw HTML, and nothing dangerous is left in the DOM', async () => {
    const { message } = await web.server.agent.send({
      body: { blocks: VECTORS.map((text) => ({ type: 'markdown', text })) },
    })
    const md = `article[data-id="${message.id}"] .markdown`
    await page.locator(md).last().waitFor()
    await Bun.sleep(300)
    // Click every link whose href was taken away (a javascript: one would run now); the
    // ones that kept theirs are checked below to be http(s) or mailto only.
    for (const link of await page.locator(`${md} a:not([href])`).all()) await link.click()
    await Bun.sleep(300)
    expect(dialogs).toEqual([])
    expect(pageErrors).toEqual([])
    expect(
      await page.evaluate(() => (window as unknown as { violations: string[] }).violations),
    ).toEqual([])
    const found = await page.evaluate((sel) => {
      const nodes = [...document.querySelectorAll(`${sel} *`)]
      return {
        handlers: nodes.flatMap((n) =>
          [...n.attributes].filter((a) => a.name.startsWith('on')).map((a) => a.name),
        ),
        hrefs: nodes.map((n) => n.getAttribute('href')).filter((h) => h !== null),
        tags: [...new Set(nodes.map((n) => n.tagName.toLowerCase()))],
        styles: nodes.filter((n) => n.hasAttribute('style')).length,
      }
    }, md)
    expect(found.handlers).toEqual([])
    for (const href of found.hrefs)
      expect(href).toMatch(/^(https:\/\/safe\.example\/ok|mailto:ops@example\.com)$/)
    for (const tag of [
      'script',
      'svg',
      'iframe',
      'object',
      'embed',
      'form',
      'style',
      'meta',
      'base',
      'math',
    ]) {
      expect(found.tags).not.toContain(tag)
    }
    expect(found.styles).toBe(0)
    // Raw HTML keeps a few plain tags; anything with attributes shows as the text it is.
    expect(await page.locator(`${md} kbd`).textContent()).toBe('Ctrl')
    expect(
      await page.locator(md).getByText('<script>alert(1)</script>', { exact: true }).count(),
    ).toBe(1)
    const safe = page.locator(`${md} a[href="https://safe.example/ok"]`)
    expect(await safe.getAttribute('rel')).toBe('noopener noreferrer')
    expect(await safe.getAttribute('target')).toBe('_blank')
  })

  test('a remote image loads only after the person asks for it', async () => {
    outbound.length = 0
    const { message } = await web.server.agent.send({
      body: {
        blocks: [
          { type: 'markdown', text: '![Latency chart](https://images.example.com/latency.png)' },
        ],
      },
    })
    const article = page.locator(`article[data-id="${message.id}"]`)
    const ask = article.getByRole('button', { name: /Show image from images\.example\.com/ })
    await ask.waitFor()
    await Bun.sleep(300)
    expect(outbound).toEqual([])
    expect(await article.locator('img').count()).toBe(0)
    await ask.click()
    await page.waitForFunction((id) => {
      const img = document.querySelector(
        `article[data-id="${id}"] .markdown img`,
      ) as HTMLImageElement
      return img?.complete && img.naturalWidth > 0
    }, message.id)
    expect(outbound).toEqual(['https://images.example.com/latency.png'])
    expect(await article.locator('img').getAttribute('alt')).toBe('Latency chart')
  })
})
