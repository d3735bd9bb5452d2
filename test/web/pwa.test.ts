import { describe, expect, test } from 'bun:test'
import { webTest } from './harness.ts'

/** What makes the app installable and safe to serve: headers, manifest, icons, offline shell. */
const web = webTest()

describe('serving the app', () => {
  test('the shell: strict CSP, no caching, the same html for every app route', async () => {
    const home = await fetch(`${web.server.url}/`)
    const csp = home.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).not.toContain('unsafe-inline')
    expect(csp).not.toContain('unsafe-eval')
    expect(csp).toContain("frame-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(home.headers.get('x-content-type-options')).toBe('nosniff')
    expect(home.headers.get('referrer-policy')).toBe('no-referrer')
    expect(home.headers.get('cache-control')).toBe('no-cache')
    const html = await home.text()
    expect(html).not.toMatch(/<script>(?!\s*<\/script>)|<script(?![^>]*\bsrc=)[^>]*>/)
    for (const path of [
      '/setup',
      '/pair',
      '/join',
      '/invite',
      '/settings',
      `/c/${web.server.channelId}`,
    ]) {
      const res = await fetch(`${web.server.url}${path}`)
      expect(res.status).toBe(200)
      expect(await res.text()).toBe(html)
    }
    // A repeat visit revalidates cheaply.
    const again = await fetch(`${web.server.url}/`, {
      headers: { 'if-none-match': home.headers.get('etag') ?? '' },
    })
    expect(again.status).toBe(304)
  })

  test('hashed assets are cached for a year and gzipped; the worker is not cached', async () => {
    const html = await (await fetch(`${web.server.url}/`)).text()
    const js = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1] as string
    const css = /href="(\/assets\/[^"]+\.css)"/.exec(html)?.[1] as string
    for (const path of [js, css]) {
      const res = await fetch(`${web.server.url}${path}`, {
        headers: { 'accept-encoding': 'gzip' },
      })
      expect(res.status).toBe(200)
      expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    }
    const raw = await fetch(`${web.server.url}${js}`, {
      headers: { 'accept-encoding': 'gzip' },
      decompress: false,
    } as RequestInit)
    expect(raw.headers.get('content-encoding')).toBe('gzip')
    const sw = await fetch(`${web.server.url}/sw.js`)
    expect(sw.headers.get('cache-control')).toBe('no-cache')
    expect(sw.headers.get('content-type')).toContain('javascript')
    expect(await sw.text()).toContain(js)
  })

  test('the manifest names its icons, and they are real PNGs of those sizes', async () => {
    const manifest = (await (await fetch(`${web.server.url}/manifest.webmanifest`)).json()) as {
      name: string
      display: string
      start_url: string
      icons: { src: string; sizes: string; purpose: string }[]
    }
    expect(manifest.name).toBe('Hark')
    expect(manifest.display).toBe('standalone')
    expect(manifest.start_url).toBe('/')
    expect(manifest.icons.map((i) => i.purpose).sort()).toEqual(['any', 'any', 'maskable'])
    for (const icon of manifest.icons) {
      const res = await fetch(`${web.server.url}${icon.src}`)
      expect(res.headers.get('content-type')).toBe('image/png')
      const bytes = new Uint8Array(await res.arrayBuffer())
      const view = new DataView(bytes.buffer)
      expect([...bytes.slice(1, 4)]).toEqual([80, 78, 71]) // "PNG"
      expect(`${view.getUint32(16)}x${view.getUint32(20)}`).toBe(icon.sizes)
    }
  })

  test('the service worker keeps the shell: the app still opens offline', async () => {
    const context = await web.context({ serviceWorkers: true })
    const page = await context.newPage()
    await page.goto(web.server.url)
    await page.locator('.channel').first().waitFor()
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready
    })
    // The first load was not controlled yet; the worker claims the page once active.
    await page.reload()
    await page.waitForFunction(() => navigator.serviceWorker.controller !== null)
    await context.setOffline(true)
    await page.reload()
    // The shell comes from the cache, the list last seen from IndexedDB (offline.test.ts), and
    // the app says it is offline until the server answers again.
    const offline = page.getByRole('status').filter({ hasText: 'Offline' })
    await offline.waitFor()
    await page.locator('.channel').first().waitFor()
    await context.setOffline(false)
    await offline.waitFor({ state: 'detached' })
    await context.close()
  })
})
