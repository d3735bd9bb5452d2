import { afterEach, describe, expect, test } from 'bun:test'
import { addPersonToken } from '../../src/people/service.ts'
import { startTestServer, type TestServer } from '../harness.ts'
import {
  AGENT_ROUTES,
  caller,
  expectError,
  label,
  PERSON_ROUTES,
  PUBLIC_ROUTES,
  type Route,
} from './routes.ts'

let s: TestServer
afterEach(() => s?.close())

const call = caller(() => s)

describe('route coverage', () => {
  test('the lists above cover every authenticated route in the OpenAPI document', async () => {
    s = await startTestServer()
    const spec = (await (await s.raw().raw('GET', '/v1/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>
    }
    const open = new Set(PUBLIC_ROUTES.map(label))
    const documented = Object.entries(spec.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .filter((operation) => !open.has(operation))
      .sort()
    const template = (r: Route) =>
      `${r.method} ${r.path
        .split('?')[0]
        ?.replace('/channels/ch_x/files/file_x', '/channels/ch_x/files/{file}')
        .replace(/\/(msg|ch|file|usr|inv|ses|tok|cred|push|sec|pol)_x/g, '/{id}')
        .replace('/code_x', '/{code}')
        .replace('/v1/pins/k', '/v1/pins/{key}')}`
    const listed = [...AGENT_ROUTES, ...PERSON_ROUTES].map(template).sort()
    expect(listed).toEqual(documented)
  })
})

/** A regular expression for an app route's path: `:param` is one segment, `*` the rest. */
const pathPattern = (path: string) =>
  new RegExp(
    `^${path
      .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
      .replace(/:\w+/g, '[^/]+')
      .replace(/\*/g, '.+')}$`,
  )

describe('every route has an auth decision', () => {
  const TABLE = [...PUBLIC_ROUTES, ...AGENT_ROUTES, ...PERSON_ROUTES]
  const decision = (row: Route) =>
    PUBLIC_ROUTES.includes(row)
      ? 'public'
      : AGENT_ROUTES.includes(row)
        ? 'agent token'
        : row.session
          ? 'browser session only'
          : 'person token or session'
  const covers = (route: { method: string; path: string }, row: Route) =>
    route.method === row.method && pathPattern(route.path).test(row.path.split('?')[0] as string)

  // A route added without a row here fails: public, agent token, person token or session, or
  // browser session only is a decision, made once, for every route.
  test('each route of the app is a row of the tables above (one decision), each row a route', async () => {
    s = await startTestServer()
    const routes = s.app.routes.map((r) => ({ method: r.method, path: r.path }))
    expect(routes.length).toBeGreaterThan(90)
    const undecided = routes.filter((r) => !TABLE.some((row) => covers(r, row)))
    expect(undecided.map((r) => `${r.method} ${r.path}`)).toEqual([])
    const stale = TABLE.filter((row) => !routes.some((r) => covers(r, row)))
    expect(stale.map(label)).toEqual([])
    const torn = routes.filter(
      (r) => new Set(TABLE.filter((row) => covers(r, row)).map(decision)).size > 1,
    )
    expect(torn.map((r) => `${r.method} ${r.path}`)).toEqual([])
  })

  test('a public route answers without credentials: never 401', async () => {
    s = await startTestServer()
    for (const route of PUBLIC_ROUTES) {
      const res = await call(route)
      expect({ route: label(route), status: res.status }).not.toEqual({
        route: label(route),
        status: 401,
      })
      expect(res.headers.get('www-authenticate')).toBeNull()
    }
  })

  test('a person route takes a browser session too; the session-only ones refuse a person token', async () => {
    s = await startTestServer()
    const sessionOnly = PERSON_ROUTES.filter((r) => r.session)
    expect(sessionOnly.length).toBeGreaterThan(0)
    for (const route of PERSON_ROUTES) {
      // A fresh session each time: logging out ends the one it is sent with.
      const { cookie } = await s.session()
      const bySession = await s.request(route.method, route.path, {
        json: route.json,
        body: route.body,
        headers: route.headers,
        cookie,
      })
      expect({ route: label(route), refused: [401, 403].includes(bySession.status) }).toEqual({
        route: label(route),
        refused: false,
      })
      const byToken = await call(
        route,
        `Bearer ${(await addPersonToken(s.ctx, { email: s.ownerEmail })).token}`,
      )
      if (route.session) {
        const error = await expectError(byToken, 403, label(route))
        expect(error).toContain('browser session')
      } else {
        expect({ route: label(route), refused: [401, 403].includes(byToken.status) }).toEqual({
          route: label(route),
          refused: false,
        })
      }
    }
  })
})

describe('401: no token, a bad token, a wrong scheme', () => {
  test('no Authorization header → 401 with a JSON error and WWW-Authenticate', async () => {
    s = await startTestServer()
    for (const route of [...AGENT_ROUTES, ...PERSON_ROUTES]) {
      const res = await call(route)
      await expectError(res, 401, label(route))
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    }
  })

  test('garbage, empty and malformed bearer values → 401', async () => {
    s = await startTestServer()
    const values = [
      'Bearer garbage',
      'Bearer hark_agent_0000000000000000000000000000000000000000000',
      'Bearer hark_person_0000000000000000000000000000000000000000000',
      'Bearer ',
      'Bearer',
      '',
      'Bearer a b',
    ]
    for (const value of values) {
      for (const route of [...AGENT_ROUTES, ...PERSON_ROUTES]) {
        await expectError(await call(route, value), 401, `${label(route)} with "${value}"`)
      }
    }
  })

  test('a real token under the wrong scheme → 401', async () => {
    s = await startTestServer()
    const { token } = await s.addChannel('Schemes')
    const person = (await addPersonToken(s.ctx, { email: s.ownerEmail })).token
    for (const value of [
      `Basic ${token}`,
      `Token ${token}`,
      token,
      `Basic ${btoa(`${token}:`)}`,
      `Bearer${token}`,
    ]) {
      for (const route of AGENT_ROUTES) {
        await expectError(await call(route, value), 401, `${label(route)} with "${value}"`)
      }
    }
    for (const route of PERSON_ROUTES) {
      await expectError(await call(route, `Basic ${person}`), 401, label(route))
    }
  })

  test('a token with a character changed or appended → 401', async () => {
    s = await startTestServer()
    const { token } = await s.addChannel('Tampered')
    const flipped = token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a')
    for (const bad of [flipped, `${token}x`, token.slice(0, -1), token.toUpperCase()]) {
      await expectError(await call(AGENT_ROUTES[0] as Route, `Bearer ${bad}`), 401, bad)
    }
  })

  test('the scheme is case-insensitive and surrounding spaces are tolerated', async () => {
    s = await startTestServer()
    const { token } = await s.addChannel('Spaces')
    for (const value of [`bearer ${token}`, `BEARER ${token}`, `Bearer   ${token}  `]) {
      expect((await call({ method: 'GET', path: '/v1/channel' }, value)).status).toBe(200)
    }
  })

  test('a stranger gets 401 before the body is validated', async () => {
    s = await startTestServer()
    const invalid = [
      { method: 'POST', path: '/v1/messages', body: '{"body": 5}' },
      { method: 'POST', path: '/v1/messages', body: '{}' },
      { method: 'PATCH', path: '/v1/agent', body: '{"label": 42}' },
      { method: 'PUT', path: '/v1/pins/bad%20key', body: '{"body": {}}' },
      { method: 'POST', path: '/v1/messages/msg_x/state', body: '{"state": "nope"}' },
      { method: 'POST', path: '/v1/app/channels/ch_x/messages', body: '[]' },
      { method: 'POST', path: '/v1/app/messages/msg_x/answer', body: '{}' },
    ]
    for (const r of invalid) {
      const route = { ...r, headers: { 'content-type': 'application/json' } }
      await expectError(await call(route), 401, label(route))
      await expectError(await call(route, 'Bearer garbage'), 401, label(route))
    }
  })

  // Elysia parses the body before the guard runs; the error handler lets auth outrank it.
  test('a stranger sending a body that is not JSON gets 401, not a parse error', async () => {
    s = await startTestServer()
    const broken = [
      { method: 'POST', path: '/v1/messages', body: '{not json' },
      { method: 'PATCH', path: '/v1/agent', body: '[' },
      { method: 'POST', path: '/v1/app/messages/msg_x/answer', body: 'nope' },
    ]
    for (const r of broken) {
      const route = { ...r, headers: { 'content-type': 'application/json' } }
      await expectError(await call(route), 401, label(route))
    }
  })
})

describe('403: the wrong kind of token', () => {
  test('a person token on every agent route → 403', async () => {
    s = await startTestServer()
    const person = (await addPersonToken(s.ctx, { email: s.ownerEmail })).token
    for (const route of AGENT_ROUTES) {
      const error = await expectError(await call(route, `Bearer ${person}`), 403, label(route))
      expect(error).toContain('agent token')
    }
  })

  test('an agent token on every /v1/app route → 403', async () => {
    s = await startTestServer()
    const { token } = await s.addChannel('Agent')
    for (const route of PERSON_ROUTES) {
      const error = await expectError(await call(route, `Bearer ${token}`), 403, label(route))
      expect(error).toContain('person token')
    }
  })

  test('the wrong kind is refused before the body is validated, and writes nothing', async () => {
    s = await startTestServer()
    const person = (await addPersonToken(s.ctx, { email: s.ownerEmail })).token
    const route = {
      method: 'POST',
      path: '/v1/messages',
      body: '{"body": "not an object"}',
      headers: { 'content-type': 'application/json' },
    }
    await expectError(await call(route, `Bearer ${person}`), 403, label(route))
    const sent = await call(
      { method: 'POST', path: '/v1/messages', json: { body: { text: 'x' } } },
      `Bearer ${person}`,
    )
    await expectError(sent, 403, 'send')
    const rows = s.ctx.db.query('SELECT count(*) AS n FROM messages').get() as { n: number }
    expect(rows.n).toBe(0)
  })
})
