import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { BrowserContext, Page } from 'playwright-core'
import { embedThread } from './embed-thread.ts'
import { webTest } from './harness.ts'

/**
 * The html block runs agent code. It must not reach the person's session: no parent DOM, no
 * cookies, no authenticated request, no answering anything but its own question, and never
 * an answer without the person: reply() only stages a value, which the app shows outside the
 * frame; only the app's Send button sends it, once.
 */
const web = webTest({ label: 'Embed bot' })
const thread = embedThread(web)
const { answerPosts, probes, probed, rendered, article, clickInEmbed, sendButton, postsFor } =
  thread
let context: BrowserContext
let page: Page
/** A "tracker" on another origin (loopback): every request that reaches it. */
let tracker: ReturnType<typeof Bun.serve>
const trackerHits: string[] = []
/** Statuses of the requests the page makes to our own /v1/app/me. */
const meStatuses: number[] = []

beforeAll(async () => {
  tracker = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req) {
      trackerHits.push(`${req.method} ${req.url}`)
      return new Response('<p id="remote">a remote page</p>', {
        headers: { 'content-type': 'text/html' },
      })
    },
  })
  ;({ context, page } = await thread.open((opened) => {
    opened.on('response', (r) => {
      if (new URL(r.url()).pathname === '/v1/app/me' && r.request().isNavigationRequest()) {
        meStatuses.push(r.status())
      }
    })
  }))
})

afterAll(async () => {
  tracker?.stop(true)
})

const PROBE = `<!doctype html><p id="probe">probe</p><script>
  const results = {}
  try { results.dom = parent.document.title } catch (e) { results.dom = 'blocked' }
  try { results.cookie = document.cookie } catch (e) { results.cookie = 'blocked' }
  try { results.storage = String(localStorage.length) } catch (e) { results.storage = 'blocked' }
  try { top.location.href = '/settings' ; results.navigate = 'tried' } catch (e) { results.navigate = 'blocked' }
  Promise.all([
    fetch('/v1/app/channels', { credentials: 'include' }).then((r) => 'status ' + r.status, () => 'blocked'),
    fetch(${JSON.stringify('URL/v1/app/me')}, { credentials: 'include', mode: 'no-cors' }).then(() => 'sent', () => 'blocked'),
  ]).then(([relative, absolute]) => {
    results.fetch = relative
    results.fetchAbsolute = absolute
    parent.postMessage({ probe: results }, '*')
  })
</script>`

describe('the html sandbox', () => {
  test('cannot read the page, its cookies or storage, nor make an authenticated request', async () => {
    const { message } = await web.server.agent.send({
      body: { blocks: [{ type: 'html', html: PROBE.replace('URL', web.server.url) }] },
    })
    const frame = page.frameLocator(`article[data-id="${message.id}"] iframe`)
    await frame.locator('#probe').waitFor()
    await page.waitForFunction(() => (window as unknown as { probes: unknown[] }).probes.length > 0)
    expect(await probes()).toEqual([
      {
        dom: 'blocked',
        cookie: 'blocked',
        storage: 'blocked',
        navigate: 'blocked',
        fetch: 'blocked',
        fetchAbsolute: 'blocked',
      },
    ])
    expect(new URL(page.url()).pathname).toBe(`/c/${web.server.channelId}`)
    const iframe = page.locator(`article[data-id="${message.id}"] iframe`)
    expect(await iframe.getAttribute('sandbox')).toBe('allow-scripts')
  })

  test('the embed document carries its own CSP, sandbox included, even when opened directly', async () => {
    const res = await fetch(`${web.server.url}/embed`)
    const csp = res.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("default-src 'none'")
    expect(csp).toContain('sandbox allow-scripts')
    expect(csp).not.toContain('allow-same-origin')
    expect(csp).not.toContain('connect-src')
    // Only the app may frame it: anywhere else a page could stage replies under its own UI.
    expect(csp).toContain("frame-ancestors 'self'")
    expect(csp).toContain("form-action 'none'")
    expect(csp).toContain("base-uri 'none'")
  })

  test('a display embed cannot answer anything; a question embed answers only its own, once', async () => {
    const other = await web.server.agent.send({
      body: { title: 'Unrelated', blocks: [{ type: 'confirm', id: 'ok', label: 'Yes' }] },
    })
    const otherId = other.message.id
    // A display embed that tries every way to answer: reply(), forged messages naming the
    // other question, and a direct request.
    const forger = await web.server.agent.send({
      body: {
        blocks: [
          {
            type: 'html',
            html: `<p id="forger">forger</p><script>
              reply(true)
              parent.postMessage({ hark: 'reply', value: true, id: ${JSON.stringify(otherId)} }, '*')
              parent.postMessage({ hark: 'ready' }, '*')
              fetch('/v1/app/messages/${otherId}/answer', { method: 'POST', body: '{"answer":true}' }).catch(() => {})
            </script>`,
          },
        ],
      },
    })
    await page
      .frameLocator(`article[data-id="${forger.message.id}"] iframe`)
      .locator('#forger')
      .waitFor()
    // A question embed whose button replies three times: each one replaces the staged value.
    const asked = await web.server.agent.send({
      body: {
        title: 'Pick',
        blocks: [
          {
            type: 'html',
            id: 'pick',
            question: true,
            html: `<button id="go" onclick="reply('first'); reply('second'); parent.postMessage({ hark: 'reply', value: 'third' }, '*')">Go</button>`,
          },
        ],
      },
    })
    await clickInEmbed(asked.message.id, '#go')
    await page.waitForFunction(
      (id) =>
        document.querySelector(`article[data-id="${id}"] .q-staged-value`)?.textContent ===
        '"third"',
      asked.message.id,
    )
    expect((await web.server.agent.ask(asked.message.id)).message.ask?.status).toBe('open')
    await sendButton(asked.message.id).click()
    await article(asked.message.id).locator('.q-outcome.answered').waitFor()
    expect((await web.server.agent.ask(asked.message.id)).message.ask?.answer).toBe('third')
    expect(postsFor(asked.message.id)).toBe(1)
    expect((await web.server.agent.ask(otherId)).message.ask?.status).toBe('open')
    expect(answerPosts).not.toContain(otherId)
    expect(answerPosts).not.toContain(forger.message.id)
    // Nothing was staged anywhere else.
    expect(await article(otherId).locator('.q-staged').count()).toBe(0)
    expect(await article(forger.message.id).locator('.q-staged, .q-staged-hint').count()).toBe(0)
  })

  test('a message posted by the page itself, not the frame, is not taken as a reply', async () => {
    const asked = await web.server.agent.send({
      body: {
        title: 'Spoof',
        blocks: [{ type: 'html', id: 'x', question: true, html: '<p id="spoof">spoof</p>' }],
      },
    })
    await page
      .frameLocator(`article[data-id="${asked.message.id}"] iframe`)
      .locator('#spoof')
      .waitFor()
    await page.evaluate(() => {
      window.postMessage({ hark: 'reply', value: 'spoofed' }, '*')
      window.postMessage({ probe: 'spoofed' }, '*')
    })
    await probed('spoofed')
    await rendered()
    expect(await article(asked.message.id).locator('.q-staged').count()).toBe(0)
    expect(await article(asked.message.id).locator('.q-staged-hint').count()).toBe(1)
    expect((await web.server.agent.ask(asked.message.id)).message.ask?.status).toBe('open')
  })

  test('a fixed height is honoured, capped at 2000; without one the frame grows to fit', async () => {
    const { message } = await web.server.agent.send({
      body: {
        blocks: [
          { type: 'html', id: 'fixed', height: 180, html: '<p>fixed</p>' },
          { type: 'html', id: 'huge', height: 2000, html: '<p>huge</p>' },
          { type: 'html', id: 'auto', html: '<div style="height:640px">tall</div>' },
          // As tall as its frame, whatever that is: must settle, not shrink or grow forever.
          { type: 'html', id: 'full', html: '<style>html,body{height:100%}</style><p>full</p>' },
        ],
      },
    })
    const frames = page.locator(`article[data-id="${message.id}"] iframe`)
    await frames.nth(2).waitFor()
    const heights = async () => frames.evaluateAll((els) => els.map((e) => e.clientHeight))
    await page.waitForFunction((id) => {
      const f = document.querySelectorAll(`article[data-id="${id}"] iframe`)[2]
      return (f?.clientHeight ?? 0) > 600
    }, message.id)
    const [fixed, huge, auto, full] = await heights()
    expect(fixed).toBe(180)
    expect(huge).toBe(2000)
    expect(auto).toBeGreaterThan(640)
    expect(auto).toBeLessThan(720)
    await Bun.sleep(400)
    expect((await heights())[3]).toBe(full as number)
  })

  describe('an embed that tries to leave the page', () => {
    const STOPPED = 'This embed tried to leave the page and was stopped.'
    const T = () => `http://127.0.0.1:${tracker.port}`

    /** Each block of `message`: its note, or a frame showing `#ok`. */
    async function outcomes(messageId: string, count: number): Promise<string[]> {
      const figures = page.locator(`article[data-id="${messageId}"] figure.b-html`)
      const out: string[] = []
      for (let i = 0; i < count; i++) {
        const figure = figures.nth(i)
        if ((await figure.locator('.b-html-stopped').count()) > 0) {
          out.push((await figure.locator('.b-html-stopped').textContent()) ?? '')
        } else {
          const ok = await figure.frameLocator('iframe').locator('#ok').count()
          out.push(ok === 1 ? 'shown' : 'frame without its html')
        }
      }
      return out
    }

    test('by script, meta refresh or a same-origin address: replaced by a note, nothing reaches another origin', async () => {
      const before = trackerHits.length
      const { message } = await web.server.agent.send({
        body: {
          blocks: [
            {
              type: 'html',
              id: 'script',
              html: `<p id="ok">ok</p><script>setTimeout(() => { location = '${T()}/script?seen=' + Date.now() }, 300)</script>`,
            },
            // While its html is being written, before the frame's second load.
            {
              type: 'html',
              id: 'parse',
              html: `<p id="ok">ok</p><script>location.href = '${T()}/parse?seen=' + Date.now()</script>`,
            },
            {
              type: 'html',
              id: 'meta',
              html: `<meta http-equiv="refresh" content="0;url=${T()}/meta"><p id="ok">ok</p>`,
            },
            // Our own origin passes the app's frame-src: the request is made (without the
            // person's cookies), the page loads in the frame, and cannot answer the check.
            {
              type: 'html',
              id: 'self',
              html: `<p id="ok">ok</p><script>setTimeout(() => { location = '/v1/app/me' }, 300)</script>`,
            },
            {
              type: 'html',
              id: 'reload',
              html: `<p id="ok">ok</p><script>setTimeout(() => location.reload(), 300)</script>`,
            },
            // Never navigates: the sandbox has no allow-forms, so the submission is refused
            // before any request (and before any event the app could see).
            {
              type: 'html',
              id: 'form',
              html: `<form id="f" action="${T()}/form"><input name="seen" value="1"><button id="b">Go</button></form><p id="ok">ok</p><script>setTimeout(() => { document.getElementById('f').submit(); document.getElementById('f').requestSubmit() }, 300)</script>`,
            },
            // Same-document navigations make no request and are not leaving.
            {
              type: 'html',
              id: 'anchor',
              html: `<p id="ok">ok</p><p id="there">there</p><script>setTimeout(() => { location.hash = 'there'; history.pushState(null, '', '#again') }, 300)</script>`,
            },
          ],
        },
      })
      const notes = page.locator(`article[data-id="${message.id}"] .b-html-stopped`)
      await page.waitForFunction(
        (id) => document.querySelectorAll(`article[data-id="${id}"] .b-html-stopped`).length >= 5,
        message.id,
        { timeout: 15_000 },
      )
      // Long enough for a late navigation or a second note to show.
      await Bun.sleep(2000)
      expect(await notes.count()).toBe(5)
      expect(await outcomes(message.id, 7)).toEqual([
        STOPPED,
        STOPPED,
        STOPPED,
        STOPPED,
        STOPPED,
        'shown',
        'shown',
      ])
      expect(trackerHits.slice(before)).toEqual([])
      expect(meStatuses).toEqual([401])
      expect(new URL(page.url()).pathname).toBe(`/c/${web.server.channelId}`)
    })

    test('by a link the person clicks: replaced by a note, nothing reaches the other origin', async () => {
      const before = trackerHits.length
      const { message } = await web.server.agent.send({
        body: {
          blocks: [{ type: 'html', html: `<a id="ok" href="${T()}/link?seen=1">Read more</a>` }],
        },
      })
      await clickInEmbed(message.id, '#ok')
      await page.locator(`article[data-id="${message.id}"] .b-html-stopped`).waitFor()
      expect(await outcomes(message.id, 1)).toEqual([STOPPED])
      expect(trackerHits.slice(before)).toEqual([])
      expect(context.pages()).toHaveLength(1)
      // Every well-behaved embed of this file is still shown: only the six above were stopped.
      expect(await page.locator('.b-html-stopped').count()).toBe(6)
    })
  })
})
