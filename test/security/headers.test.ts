import { afterEach, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../harness.ts'

/**
 * Finding 10 of the attack pass: authenticated answers carried no `Cache-Control`, so a shared
 * computer's browser or a proxy could keep messages, answers and tokens. Every GET route of the
 * app is tried, found from its own route table.
 */

let s: TestServer
afterEach(() => s?.close())

test('every /v1 answer says no-store: each GET route, with its token, and the refusals', async () => {
  s = await startTestServer()
  const { message } = await s.agent.send({ body: { text: 'hi' } })
  const file = await s.agent.upload('a.txt', 'x', 'text/plain')
  const paths = s.app.routes
    .filter((r) => r.method === 'GET' && r.path.startsWith('/v1/'))
    .map((r) =>
      r.path
        .replace(':id', r.path.startsWith('/v1/app/channels') ? s.channelId : message.id)
        .replace(/:\w+/g, 'x'),
    )
  expect(paths.length).toBeGreaterThan(15)
  for (const path of paths) {
    const token = path.startsWith('/v1/app/') ? s.personToken : s.agentToken
    for (const as of [token, undefined]) {
      const response = await s.request('GET', path, { token: as, origin: null })
      expect({
        path,
        status: response.status,
        cache: response.headers.get('cache-control'),
      }).toEqual({
        path,
        status: response.status,
        cache: 'no-store',
      })
    }
  }
  // A file keeps its own: immutable by id, and only the person's own browser may keep it.
  const download = await s.request('GET', `/v1/files/${file.file_id}`, {
    token: s.agentToken,
    origin: null,
  })
  expect(download.status).toBe(200)
  expect(download.headers.get('cache-control')).toBe('private, max-age=31536000, immutable')
  // The web app's own assets are not API answers: they keep their caching.
  const shell = await s.request('GET', '/', { origin: null })
  expect(shell.headers.get('cache-control')).not.toBe('no-store')
})
