import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../harness.ts'

/**
 * Which paths are the app's and which the API's (issue 28): a person who opens an address the
 * app has no screen for (`/approvals`, an old link, a typo) gets the app, with status 404, and
 * the app shows its "not found" screen (test/web/not-found.test.ts); the API's own paths keep
 * their JSON 404, and a missing file stays a missing file.
 */
let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s?.close())

/** As a browser opens a page: it asks for HTML. */
const PAGE = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'
const get = (path: string) => s.request('GET', path, { origin: null, headers: { accept: PAGE } })

describe('GET an unknown path', () => {
  for (const path of ['/approvals', '/some/deep/path', '/c']) {
    test(`${path}: the app's shell, status 404, with the app's headers`, async () => {
      const r = await get(path)
      expect(r.status).toBe(404)
      expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(r.headers.get('content-security-policy')).toContain("script-src 'self'")
      expect(r.headers.get('x-frame-options')).toBe('DENY')
      expect(r.headers.get('etag')).toBeNull()
      expect(r.text).toBe((await get('/')).text)
    })
  }

  test('the shell is gzipped for a client that takes it, like the shell itself', async () => {
    const r = await s.request('GET', '/approvals', {
      origin: null,
      headers: { accept: PAGE, 'accept-encoding': 'gzip' },
    })
    expect(r.status).toBe(404)
    expect(r.headers.get('content-encoding')).toBe('gzip')
    expect(r.headers.get('vary')).toBe('accept-encoding')
  })

  test("the API's paths keep their JSON 404", async () => {
    for (const path of [
      '/v1/nope',
      '/v1',
      '/v1/app/nope',
      '/v2/messages',
      '/metrics',
      '/health/x',
    ]) {
      const r = await get(path)
      expect({ path, status: r.status, body: r.body }).toEqual({
        path,
        status: 404,
        body: { error: `no route GET ${path}` },
      })
    }
  })

  test('a missing file is a JSON 404, not the app', async () => {
    for (const path of ['/assets/missing.js', '/favicon.ico', '/icons/nope.png']) {
      const r = await get(path)
      expect({ path, status: r.status, type: r.headers.get('content-type') }).toEqual({
        path,
        status: 404,
        type: 'application/json; charset=utf-8',
      })
    }
  })

  test('a client that does not ask for a page (an agent, curl) keeps the JSON 404', async () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const headers: Record<string, string> = accept ? { accept } : {}
      const r = await s.request('GET', '/approvals', { origin: null, headers })
      expect({ accept, status: r.status, body: r.body }).toEqual({
        accept,
        status: 404,
        body: { error: 'no route GET /approvals' },
      })
    }
  })

  test('other methods on an app path are JSON 404s', async () => {
    const r = await s.request('POST', '/approvals', { json: {} })
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ error: 'no route POST /approvals' })
  })

  test("the app's known screens are still 200", async () => {
    const screens = [
      '/',
      '/settings',
      '/policies',
      `/c/${s.channelId}`,
      `/c/${s.channelId}/approvals`,
    ]
    for (const path of screens) {
      expect({ path, status: (await get(path)).status }).toEqual({ path, status: 200 })
    }
  })
})
