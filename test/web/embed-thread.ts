import type { BrowserContext, Page } from 'playwright-core'
import type { WebTest } from './harness.ts'

/**
 * The thread page that the html-embed test files (html-sandbox.test.ts, html-staging.test.ts)
 * drive, and what they read from it. `open()` belongs in the file's `beforeAll`; the helpers
 * use the page it opened.
 */
export function embedThread(web: WebTest) {
  let opened: Page | undefined
  const page = () => {
    if (!opened) throw new Error('the thread page opens in beforeAll')
    return opened
  }
  /** Every answer the page posts, by message id. */
  const answerPosts: string[] = []
  const article = (id: string) => page().locator(`article[data-id="${id}"]`)

  return {
    answerPosts,
    /**
     * A fresh logged-in page at the channel's thread, recording the answers it posts and
     * collecting what probes report; `watch` adds listeners before it loads.
     */
    async open(watch?: (page: Page) => void): Promise<{ context: BrowserContext; page: Page }> {
      const context = await web.context()
      const thread = await context.newPage()
      thread.on('request', (r) => {
        const m = /\/v1\/app\/messages\/([^/]+)\/answer$/.exec(new URL(r.url()).pathname)
        if (m && r.method() === 'POST') answerPosts.push(m[1] as string)
      })
      watch?.(thread)
      await thread.goto(`${web.server.url}/c/${web.server.channelId}`)
      await thread.locator('.messages-inner').waitFor()
      // Collects what the probes report (the app itself ignores these messages).
      await thread.evaluate(() => {
        const w = window as unknown as { probes: unknown[] }
        w.probes = []
        window.addEventListener('message', (e) => {
          if (e.data && typeof e.data === 'object' && 'probe' in e.data) w.probes.push(e.data.probe)
        })
      })
      opened = thread
      return { context, page: thread }
    },

    probes: () => page().evaluate(() => (window as unknown as { probes: unknown[] }).probes),

    /** Until the page has received the probe `name` (posted after whatever the test waits on). */
    probed: (name: string) =>
      page().waitForFunction(
        (n) => (window as unknown as { probes: unknown[] }).probes.includes(n),
        name,
      ),

    /** Until the app has rendered what the messages received so far changed. */
    rendered: () =>
      page().evaluate(
        () => new Promise<void>((r) => requestAnimationFrame(() => setTimeout(() => r(), 0))),
      ),

    article,

    /**
     * Clicks `selector` inside message `id`'s embed once the embed has settled: a fresh embed
     * shrinks from its starting height to its content's, and the thread, kept at its bottom,
     * moves with it; a click aimed before that can land where the button was (seen: a missed
     * click).
     */
    async clickInEmbed(id: string, selector: string): Promise<void> {
      await page().waitForFunction((mid) => {
        const frame = document.querySelector<HTMLIFrameElement>(`article[data-id="${mid}"] iframe`)
        return frame !== null && frame.style.height !== '' && frame.style.height !== '120px'
      }, id)
      await page().evaluate(
        () =>
          new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))),
      )
      await page().frameLocator(`article[data-id="${id}"] iframe`).locator(selector).click()
    },

    /** The app's own Send button under a lone html question, once enabled. */
    sendButton: (id: string) => article(id).locator('.q-staged-send:enabled'),
    stagedText: (id: string) => article(id).locator('.q-staged-value').textContent(),
    postsFor: (id: string) => answerPosts.filter((x) => x === id).length,
  }
}
