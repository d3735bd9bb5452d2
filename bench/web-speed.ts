/**
 * The answering app on a phone-class CPU: Chromium (Debian's, through playwright-core) with
 * Chrome's 4× CPU throttling, at 390×844, against a server whose channel holds 1,000 messages
 * (text, markdown, code, progress, tables, key/values in turn).
 *
 *   bun bench/web-speed.ts [--messages 1000] [--loads 5]
 *
 * Prints: navigation → newest message visible (median and worst of `--loads` fresh loads);
 * scrolling back through the thread to its first message (frames over 50 ms, p95 frame time,
 * how long it took); and the JavaScript a first visit downloads, gzip-compressed (the app's
 * bundles and the service worker). Targets (issue 18): newest message < 1.5 s; smooth scrolling;
 * ≤ 150 KB of gzip JavaScript. Runs the server in process from source (the figures are the
 * browser's); builds the web app first (`bun run build:web`).
 */
import { gzipSync } from 'bun'
import type { CDPSession, Page } from 'playwright-core'
import { arg, ms, pct } from './lib.ts'
import { type Profiled, profiledBundle, profileStart } from './web-profile.ts'

const MESSAGES = arg('messages', 1000)
const LOADS = arg('loads', 5)
/** `--profile`: where the time of one load and of the scroll goes (bench/web-profile.ts). */
const PROFILE = process.argv.includes('--profile')

function body(i: number) {
  switch (i % 6) {
    case 0:
      return { text: `Step ${i}: compiled 214 files in 3.2 s` }
    case 1:
      return {
        title: `Build #${i}`,
        blocks: [{ type: 'markdown', text: `**${i}** tests, _all green_.\n\n- api\n- web` }],
      }
    case 2:
      return {
        blocks: [{ type: 'code', language: 'ts', code: `export const n${i} = ${i}\n`.repeat(8) }],
      }
    case 3:
      return { blocks: [{ type: 'progress', value: i % 10, max: 10, label: 'Deploy' }] }
    case 4:
      return {
        blocks: [
          {
            type: 'table',
            columns: ['Suite', 'Passed', 'Failed'],
            rows: [
              ['api', i, 0],
              ['web', 33, 1],
            ],
          },
        ],
      }
    default:
      return {
        blocks: [
          {
            type: 'keyvalue',
            items: [
              { key: 'Branch', value: 'main' },
              { key: 'Run', value: String(i) },
            ],
          },
        ],
      }
  }
}

/**
 * Every file index.html names must be served: another build of this tree between ours and the
 * server's first read of them (the server reads each on first use) would otherwise show as a
 * blank page 30 s later instead of this error now.
 */
async function shellServed(base: string): Promise<void> {
  const html = await (await fetch(base)).text()
  const named = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string)
  for (const path of [...named, '/sw.js']) {
    const response = await fetch(`${base}${path}`)
    if (!response.ok) {
      throw new Error(`${path} answers ${response.status}: web/dist changed under the bench`)
    }
  }
}

const proc = Bun.spawnSync([process.execPath, 'run', 'build:web'], {
  stdout: 'ignore',
  stderr: 'inherit',
})
if (proc.exitCode !== 0) throw new Error('bun run build:web failed')

// The server is loaded only now, after the build: its map of the app's files
// (src/server/webapp/assets.gen.ts) is read when its modules load, and a static import runs
// before this file's first line. The previous build's map then served index.html naming the
// new bundle, which it did not know: a 404 for the app's only script and a blank page, on
// every run where web/src had changed since the last build.
const { launchBrowser, loggedInContext, PHONE, startWebServer } = await import(
  '../test/web/harness.ts'
)
const server = await startWebServer({ label: 'Busy bot' })
await shellServed(server.url)
const chrome = await launchBrowser()
try {
  for (let i = 0; i < MESSAGES; i++) await server.agent.send({ body: body(i) })
  const last = `Step ${MESSAGES - (MESSAGES % 6 === 0 ? 6 : MESSAGES % 6)}`
  const path = `/c/${server.channelId}`

  const readable = PROFILE ? await profiledBundle() : undefined

  async function throttledPage(): Promise<{
    page: Page
    cdp: CDPSession
    close(): Promise<void>
  }> {
    const context = await loggedInContext(chrome.browser, server, {
      viewport: PHONE,
      serviceWorkers: true,
    })
    const page = await context.newPage()
    // A crashed tab ends the run with a "Target closed": say so, with what it said last.
    page.on('crash', () => console.error('bench: the page crashed (renderer process gone)'))
    page.on('pageerror', (e) => console.error(`bench: page error: ${e.message}`))
    const cdp = await context.newCDPSession(page)
    await cdp.send('Emulation.setCPUThrottlingRate', { rate: 4 })
    if (readable) await readable.serve(page)
    return { page, cdp, close: () => context.close() }
  }

  // 1. Fresh loads: navigation start → the newest message on screen.
  const loads: number[] = []
  const steps: number[][] = []
  let jsBytes = 0
  let jsFiles: string[] = []
  for (let n = 0; n < LOADS; n++) {
    const { page, cdp, close } = await throttledPage()
    const profiling: Profiled | undefined =
      readable && n === LOADS - 1 ? await profileStart(chrome.browser, page, cdp) : undefined
    const scripts: Promise<void>[] = []
    const sizes = new Map<string, number>()
    page.on('response', (response) => {
      const type = response.request().resourceType()
      if (type !== 'script' && !response.url().endsWith('.js')) return
      scripts.push(
        response.body().then(
          (b) => {
            sizes.set(new URL(response.url()).pathname, gzipSync(new Uint8Array(b)).byteLength)
          },
          () => {},
        ),
      )
    })
    // Watched from inside the page, each frame: a Playwright locator would first inject its own
    // script, ~250-350 ms of the throttled main thread in the middle of the load measured.
    await page.addInitScript((text: string) => {
      const look = () => {
        const list = document.querySelector('.messages')
        const newest = [...(list?.querySelectorAll('.msg') ?? [])]
          .slice(-8)
          .find((m) => m.textContent?.includes(text))
        const box = newest?.getBoundingClientRect()
        const view = list?.getBoundingClientRect()
        if (box && view && box.height > 0 && box.bottom > view.top && box.top < view.bottom) {
          ;(window as unknown as { shown: number }).shown = performance.now()
        } else requestAnimationFrame(look)
      }
      requestAnimationFrame(look)
    }, last)
    await page.goto(`${server.url}${path}`)
    let shown: number | undefined
    for (let waited = 0; shown === undefined; waited += 50) {
      if (waited > 30_000) {
        await page.screenshot({ path: '/tmp/web-speed-failed.png' }).catch(() => {})
        throw new Error(`no newest message (screenshot /tmp/web-speed-failed.png): ${page.url()}`)
      }
      await Bun.sleep(50)
      shown = await page.evaluate(() => (window as unknown as { shown?: number }).shown)
    }
    loads.push(shown)
    // The way there: when the app's script had arrived, and the newest page was asked and came.
    steps.push(
      await page.evaluate(() => {
        const all = performance.getEntriesByType('resource') as PerformanceResourceTiming[]
        const script = all.find((e) => /\/assets\/main-.*\.js/.test(e.name))
        const tail = all.find((e) => e.name.includes('tail='))
        return [script?.responseEnd ?? 0, tail?.startTime ?? 0, tail?.responseEnd ?? 0]
      }),
    )
    if (profiling && readable) await profiling.report('opening the thread', readable.moduleAt)
    if (n === 0) {
      // The service worker registers on the first visit: wait for it so its script counts too.
      await page.evaluate(() => navigator.serviceWorker?.ready.then(() => undefined))
      await Promise.all(scripts)
      // The service worker's own script is fetched outside the page: weighed here.
      const sw = await fetch(`${server.url}/sw.js`)
      sizes.set('/sw.js', gzipSync(new Uint8Array(await sw.arrayBuffer())).byteLength)
      jsBytes = [...sizes.values()].reduce((a, b) => a + b, 0)
      jsFiles = [...sizes.entries()].map(([p, b]) => `${p} ${(b / 1024).toFixed(1)} KB`)
    }
    await close()
  }
  loads.sort((a, b) => a - b)
  console.log(
    `${MESSAGES}-message thread, 4× CPU throttling, 390×844: newest message visible after ` +
      `p50 ${ms(pct(loads, 50))}, worst ${ms(loads.at(-1) as number)} over ${LOADS} fresh loads (target < 1500 ms)`,
  )
  const step = (i: number) =>
    ms(
      pct(
        steps.map((s) => s[i] as number).sort((a, b) => a - b),
        50,
      ),
    )
  console.log(
    `  on the way (p50): the app's script arrived ${step(0)}, the newest page asked ${step(1)}, ` +
      `answered ${step(2)}`,
  )
  console.log(
    `first visit downloads ${(jsBytes / 1024).toFixed(1)} KB of gzip JavaScript (target ≤ 150 KB): ${jsFiles.join(', ')}`,
  )

  // 2. Scrolling back to the first message, as a thumb would: frame times meanwhile.
  const { page, cdp, close } = await throttledPage()
  await page.goto(`${server.url}${path}`)
  await page.getByText(last, { exact: false }).last().waitFor({ state: 'visible' })
  const profiling = readable ? await profileStart(chrome.browser, page, cdp) : undefined
  const scroll = await page.evaluate(async (first: string) => {
    const list = document.querySelector('.messages')?.closest('[class*=scroll], .thread, main')
    const scroller =
      [...document.querySelectorAll<HTMLElement>('*')].find(
        (el) =>
          el.scrollHeight > el.clientHeight + 10 && getComputedStyle(el).overflowY !== 'visible',
      ) ?? (list as HTMLElement | null)
    if (!scroller) return { frames: [] as number[], ms: 0, reached: false }
    const frames: number[] = []
    let last = performance.now()
    let running = true
    const tick = (now: number) => {
      frames.push(now - last)
      last = now
      if (running) requestAnimationFrame(tick)
    }
    requestAnimationFrame(tick)
    const started = performance.now()
    const deadline = started + 60_000
    let reached = false
    while (performance.now() < deadline) {
      scroller.scrollTop -= 600
      await new Promise((r) => requestAnimationFrame(() => r(undefined)))
      if ([...document.querySelectorAll('.msg')].some((m) => m.textContent?.includes(first))) {
        reached = true
        break
      }
    }
    running = false
    return { frames, ms: performance.now() - started, reached }
  }, 'Step 0:')
  if (profiling && readable) await profiling.report('scrolling back', readable.moduleAt)
  await close()
  const frames = [...scroll.frames].sort((a, b) => a - b)
  const long = frames.filter((f) => f > 50).length
  console.log(
    `scrolling back through ${MESSAGES} messages (600 px a frame, 4× throttling): ` +
      `${scroll.reached ? 'reached the first message' : 'did NOT reach the first message'} in ` +
      `${(scroll.ms / 1000).toFixed(1)} s; ${frames.length} frames, p50 ${ms(pct(frames, 50))}, ` +
      `p95 ${ms(pct(frames, 95))}, ${long} over 50 ms; longest ${frames
        .slice(-5)
        .map((f) => f.toFixed(0))
        .join(', ')} ms`,
  )
} finally {
  await chrome.close()
  await server.close()
}
