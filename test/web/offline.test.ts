import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { requireBinary, type Served, startServe } from '../binary/process.ts'
import { startTestServer, tempDir } from '../harness.ts'
import { launchBrowser, PHONE, screenshot, watchErrors } from './harness.ts'

/**
 * Reconnect and offline (issue 18) against the compiled binary: the server killed with SIGKILL
 * and started again on the same port and data directory, the thread live again within 2 s; the
 * browser context set offline, the app opening from the service worker's shell and IndexedDB,
 * messages written offline sent exactly once when back; a send whose answer is lost retried
 * under the same Idempotency-Key and landing once.
 */
const dir = tempDir('hark-web-offline-')
let served: Served
let port = 0
let base = ''
let cookie = ''
let agentToken = ''
let channelId = ''
let browser: Browser
let closeBrowser: () => Promise<void>
const contexts: BrowserContext[] = []

/** A free loopback port, fixed for the test: a restart must come back on the same one. */
function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const free = listener.port
  listener.stop(true)
  return free
}

const serve = () =>
  startServe(['--data', dir, '--port', String(port), '--base-url', `http://localhost:${port}`])

// 60 s, not the tests' 30 (as webTest): on a loaded 2-core machine a browser starts beside
// another file's, and a failed start loses every test of the file at once.
beforeAll(async () => {
  requireBinary()
  // The owner, a channel with its agent token and a browser session, made on the data
  // directory in-process; then the binary serves that directory.
  const seed = await startTestServer({ dataDir: dir, label: 'Build bot' })
  cookie = (await seed.session(undefined, 'playwright')).cookie
  agentToken = seed.agentToken
  channelId = seed.channelId
  await seed.stop()
  port = freePort()
  base = `http://localhost:${port}`
  served = await serve()
  ;({ browser, close: closeBrowser } = await launchBrowser())
}, 60_000)
afterAll(async () => {
  for (const c of contexts) await c.close()
  await closeBrowser?.()
  served?.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
}, 60_000)

/** A phone logged in with the seeded session; the service worker on unless told. */
async function phone(serviceWorkers: 'allow' | 'block' = 'allow') {
  const context = await browser.newContext({ viewport: PHONE, serviceWorkers })
  contexts.push(context)
  const [name, value] = cookie.split('=') as [string, string]
  await context.addCookies([{ name, value, url: base, httpOnly: true, sameSite: 'Strict' }])
  const page = await context.newPage()
  const errors = watchErrors(page)
  return { context, page, errors }
}

async function agentSays(text: string): Promise<void> {
  const response = await fetch(`${base}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agentToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ body: { text } }),
  })
  expect(response.status).toBe(200)
}

interface AgentRead {
  body: { text?: string; blocks?: { type: string; file_id?: string; name?: string }[] }
}

/** The person's messages the agent reads with exactly `text`. */
async function agentMessages(text: string): Promise<AgentRead[]> {
  const response = await fetch(`${base}/v1/messages?since=0&sender=human&peek=true&limit=500`, {
    headers: { authorization: `Bearer ${agentToken}` },
  })
  const { messages } = (await response.json()) as { messages: AgentRead[] }
  return messages.filter((m) => m.body.text === text)
}

/** How many of the person's messages the agent reads with exactly `text`. */
const agentReads = async (text: string) => (await agentMessages(text)).length

/** The texts of the thread kept in IndexedDB for offline (web/src/lib/offline-store.ts). */
const savedTexts = (page: Page) =>
  page.evaluate(
    (id) =>
      new Promise<string[]>((resolve) => {
        const open = indexedDB.open('hark-offline')
        open.onsuccess = () => {
          const db = open.result
          if (!db.objectStoreNames.contains('threads')) return resolve([])
          const get = db.transaction('threads').objectStore('threads').get(id)
          get.onsuccess = () =>
            resolve(
              ((get.result?.messages ?? []) as { body: { text?: string } }[]).map(
                (m) => m.body.text ?? '',
              ),
            )
        }
        open.onerror = () => resolve([])
      }),
    channelId,
  )

/** A message in the open thread (the list's preview of the newest has the same text). */
const inThread = (page: Page, text: string) =>
  page.getByRole('log', { name: 'Messages' }).getByText(text, { exact: true })
const banner = (page: Page) => page.getByRole('status').filter({ hasText: 'Offline' })
const sent = (page: Page, text: string) =>
  page.locator('article.msg.mine:not(.pending)').filter({ hasText: text })
const pending = (page: Page) => page.locator('article.msg.pending')

async function write(page: Page, text: string) {
  const box = page.getByLabel('Message to the agent')
  await box.fill(text)
  await box.press('Enter')
  // Cleared once the message is sent or queued.
  await page.waitForFunction(
    () => (document.querySelector('textarea') as HTMLTextAreaElement).value === '',
  )
}

describe('reconnect and offline', () => {
  let page: Page
  let context: BrowserContext
  let errors: string[]

  test('after a SIGKILL and restart, the open thread is live again within 2 s', async () => {
    ;({ page, context, errors } = await phone())
    await agentSays('before the restart')
    await page.goto(`${base}/c/${channelId}`)
    await inThread(page, 'before the restart').waitFor()
    // The worker installed first: one registering while the server is down would never be.
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready
    })
    served.proc.kill('SIGKILL')
    await served.proc.exited
    served = await serve()
    for (;;) {
      const ok = await fetch(`${base}/health`).then(
        (r) => r.ok,
        () => false,
      )
      if (ok) break
    }
    const back = performance.now()
    await agentSays('after the restart')
    await inThread(page, 'after the restart').waitFor({ timeout: 5000 })
    const resumed = performance.now() - back
    console.log(`live again ${resumed.toFixed(0)} ms after the server's /health answered`)
    expect(resumed).toBeLessThan(2000)
    await expect(banner(page).count()).resolves.toBe(0)
  })

  test('offline: the cue, the saved thread after a reload, sends queued and sent once', async () => {
    // Controlled by the worker (the first load was not) and the thread saved for offline.
    await page.reload()
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null)
    await inThread(page, 'after the restart').waitFor()
    for (let i = 0; !(await savedTexts(page)).includes('after the restart'); i++) {
      expect(i).toBeLessThan(100)
      await page.waitForTimeout(50)
    }

    await context.setOffline(true)
    await banner(page).waitFor()
    await page.reload()
    // The shell from the worker's cache; the thread and the list's name from IndexedDB.
    await banner(page).waitFor()
    await inThread(page, 'before the restart').waitFor()
    await inThread(page, 'after the restart').waitFor()
    await page.getByRole('heading', { name: 'Build bot' }).waitFor()

    await write(page, 'written offline, one')
    await write(page, 'written offline, two')
    await expect(pending(page).count()).resolves.toBe(2)
    await pending(page).getByText('Sending when online').first().waitFor()
    await screenshot(page, 'offline-phone')
    // Kept through a reload, still unsent.
    await page.reload()
    await pending(page).filter({ hasText: 'written offline, two' }).waitFor()
    await expect(pending(page).count()).resolves.toBe(2)
    expect(await agentReads('written offline, one')).toBe(0)

    await context.setOffline(false)
    await sent(page, 'written offline, one').waitFor()
    await sent(page, 'written offline, two').waitFor()
    await pending(page).first().waitFor({ state: 'detached' })
    await banner(page).waitFor({ state: 'detached' })
    expect(await agentReads('written offline, one')).toBe(1)
    expect(await agentReads('written offline, two')).toBe(1)
    // In the order written.
    const texts = await page.locator('article.msg.mine .msg-text').allTextContents()
    expect(texts.indexOf('written offline, one')).toBeLessThan(
      texts.indexOf('written offline, two'),
    )
    expect(errors.filter((e) => !/ERR_INTERNET_DISCONNECTED|Failed to load/.test(e))).toEqual([])
  })

  test('a send whose answer is lost is sent again with its key and lands once', async () => {
    // No worker: page.route sees only what the page itself fetches.
    const { page: lost } = await phone('block')
    const keys: string[] = []
    // The answers' header, read as each answer arrives (a promise kept at once: reading it is
    // another round trip to the browser, which may end after the page has shown the message).
    const replayed: Promise<string | null>[] = []
    let dropped = false
    await lost.route('**/v1/app/channels/*/messages', async (route) => {
      const request = route.request()
      if (request.method() !== 'POST') return route.continue()
      keys.push((await request.headerValue('idempotency-key')) ?? '')
      if (dropped) return route.continue()
      dropped = true
      // The server takes the message; its answer never reaches the page.
      const answer = await route.fetch()
      expect(answer.status()).toBe(200)
      await route.abort('connectionreset')
    })
    lost.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().endsWith('/messages')) {
        replayed.push(r.headerValue('idempotent-replayed'))
      }
    })
    await lost.goto(`${base}/c/${channelId}`)
    await inThread(lost, 'after the restart').waitFor()
    await write(lost, 'answer lost on the way')
    await sent(lost, 'answer lost on the way').waitFor()
    await pending(lost).first().waitFor({ state: 'detached' })
    expect(keys).toHaveLength(2)
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0] as string)
    // The event itself can reach this process after the page has drawn what the answer said.
    for (let i = 0; replayed.length === 0; i++) {
      expect(i).toBeLessThan(100)
      await lost.waitForTimeout(50)
    }
    expect(await Promise.all(replayed)).toEqual(['true'])
    expect(await agentReads('answer lost on the way')).toBe(1)
  })

  test('a file attached offline waits with its message, through a reload, and goes once with it', async () => {
    const { context: offline, page: p, errors: seen } = await phone()
    await p.goto(`${base}/c/${channelId}`)
    await inThread(p, 'after the restart').waitFor()
    await p.evaluate(async () => {
      await navigator.serviceWorker.ready
    })
    await p.reload()
    await p.waitForFunction(() => navigator.serviceWorker.controller !== null)
    for (let i = 0; !(await savedTexts(p)).includes('after the restart'); i++) {
      expect(i).toBeLessThan(100)
      await p.waitForTimeout(50)
    }
    await offline.setOffline(true)
    await banner(p).waitFor()
    const report = 'line of the report\n'.repeat(400)
    await p.locator('.composer input[type=file]').setInputFiles({
      name: 'report.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(report),
    })
    await p.locator('.composer .attachments').getByText('report.txt').waitFor()
    await write(p, 'with a file, offline')
    const waiting = () => pending(p).filter({ hasText: 'with a file, offline' })
    await waiting().getByText('report.txt').waitFor()
    await waiting().getByText('Sending when online').waitFor()
    await screenshot(p, 'offline-file-phone')
    // The bytes are kept with it (IndexedDB), not only in the page.
    await p.reload()
    await waiting().getByText('report.txt').waitFor()
    expect(await agentReads('with a file, offline')).toBe(0)

    await offline.setOffline(false)
    await sent(p, 'with a file, offline').waitFor()
    await waiting().waitFor({ state: 'detached' })
    const [message, ...more] = await agentMessages('with a file, offline')
    expect(more).toHaveLength(0)
    const blocks = message?.body.blocks ?? []
    expect(blocks).toHaveLength(1)
    expect(blocks[0]).toMatchObject({ type: 'file', name: 'report.txt' })
    const file = await fetch(`${base}/v1/files/${blocks[0]?.file_id}`, {
      headers: { authorization: `Bearer ${agentToken}` },
    })
    expect(await file.text()).toBe(report)
    expect(seen.filter((e) => !/ERR_INTERNET_DISCONNECTED|Failed to load/.test(e))).toEqual([])
  })
})
