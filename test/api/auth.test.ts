import { afterEach, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { addPersonToken } from '../../src/people/service.ts'
import { webFiles } from '../../src/server/webapp/assets.gen.ts'
import { SPA_ROUTES } from '../../src/server/webapp/headers.ts'
import { type Reply, startTestServer, TestClock, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

interface Route {
  method: string
  path: string
  json?: unknown
  body?: string
  headers?: Record<string, string>
  /** Person routes only a browser session may use: a person token gets 403. */
  session?: boolean
}

/** Every agent route, with a request that would be valid for it. */
const AGENT_ROUTES: Route[] = [
  { method: 'GET', path: '/v1/messages' },
  { method: 'POST', path: '/v1/messages', json: { body: { text: 'hi' } } },
  { method: 'PATCH', path: '/v1/messages/msg_x', json: { text: 'x' } },
  { method: 'PUT', path: '/v1/messages/msg_x', json: { body: { text: 'x' } } },
  { method: 'DELETE', path: '/v1/messages/msg_x' },
  { method: 'POST', path: '/v1/messages/msg_x/state', json: { state: 'seen' } },
  { method: 'POST', path: '/v1/messages/msg_x/cancel' },
  { method: 'GET', path: '/v1/asks' },
  { method: 'GET', path: '/v1/asks/msg_x' },
  { method: 'GET', path: '/v1/pins' },
  { method: 'PUT', path: '/v1/pins/k', json: { body: { text: 'x' } } },
  { method: 'PATCH', path: '/v1/pins/k', json: { text: 'x' } },
  { method: 'DELETE', path: '/v1/pins/k' },
  {
    method: 'POST',
    path: '/v1/files?name=a.txt',
    body: 'abc',
    headers: { 'content-type': 'text/plain' },
  },
  { method: 'GET', path: '/v1/files/file_x' },
  { method: 'GET', path: '/v1/channel' },
  { method: 'PATCH', path: '/v1/agent', json: { label: 'x' } },
  { method: 'POST', path: '/v1/secrets', json: { name: 'X', public_key: 'x' } },
  { method: 'GET', path: '/v1/secrets/sec_x' },
  { method: 'DELETE', path: '/v1/secrets/sec_x' },
]

/** Every route of the person's side. */
const PERSON_ROUTES: Route[] = [
  { method: 'GET', path: '/v1/app/channels' },
  { method: 'GET', path: '/v1/app/secrets/sec_x' },
  { method: 'POST', path: '/v1/app/secrets/sec_x/fulfil', json: { ciphertext: 'x' } },
  { method: 'GET', path: '/v1/app/feed' },
  { method: 'GET', path: '/v1/app/channels/ch_x/messages' },
  { method: 'POST', path: '/v1/app/channels/ch_x/messages', json: { body: { text: 'hi' } } },
  { method: 'POST', path: '/v1/app/messages/msg_x/answer', json: { answer: true } },
  { method: 'GET', path: '/v1/app/channels/ch_x' },
  { method: 'PATCH', path: '/v1/app/channels/ch_x', json: { label: 'x' } },
  { method: 'DELETE', path: '/v1/app/channels/ch_x' },
  { method: 'POST', path: '/v1/app/channels/ch_x/read' },
  { method: 'GET', path: '/v1/app/channels/ch_x/pins' },
  {
    method: 'POST',
    path: '/v1/app/channels/ch_x/files?name=a.txt',
    body: 'hello',
    headers: { 'content-type': 'text/plain' },
  },
  { method: 'GET', path: '/v1/app/channels/ch_x/files/file_x' },
  { method: 'GET', path: '/v1/app/me' },
  { method: 'GET', path: '/v1/app/people' },
  { method: 'DELETE', path: '/v1/app/people/usr_x' },
  { method: 'GET', path: '/v1/app/settings' },
  { method: 'PATCH', path: '/v1/app/settings', json: { registration: 'open' } },
  { method: 'GET', path: '/v1/app/invites' },
  { method: 'POST', path: '/v1/app/invites', json: {} },
  { method: 'DELETE', path: '/v1/app/invites/inv_x' },
  { method: 'GET', path: '/v1/app/sessions' },
  { method: 'DELETE', path: '/v1/app/sessions/ses_x' },
  { method: 'POST', path: '/v1/app/logout' },
  { method: 'POST', path: '/v1/app/logout-all' },
  { method: 'GET', path: '/v1/app/tokens' },
  { method: 'POST', path: '/v1/app/tokens', json: { label: 'x' }, session: true },
  { method: 'DELETE', path: '/v1/app/tokens/tok_x' },
  { method: 'POST', path: '/v1/app/tokens/tok_x/rotate', session: true },
  { method: 'GET', path: '/v1/app/pairings/code_x' },
  { method: 'POST', path: '/v1/app/pairings/code_x/approve', json: {}, session: true },
  { method: 'POST', path: '/v1/app/pairings/code_x/deny' },
  { method: 'POST', path: '/v1/app/join-links', json: {}, session: true },
  { method: 'GET', path: '/v1/app/passkeys' },
  { method: 'POST', path: '/v1/app/passkeys/options', session: true },
  {
    method: 'POST',
    path: '/v1/app/passkeys/verify',
    // A well-formed credential: the session is checked once the body is valid.
    json: {
      challenge_id: 'x',
      response: {
        id: 'x',
        rawId: 'x',
        type: 'public-key',
        response: { clientDataJSON: 'x', attestationObject: 'x' },
      },
    },
    session: true,
  },
  { method: 'PATCH', path: '/v1/app/passkeys/cred_x', json: { name: 'x' } },
  { method: 'DELETE', path: '/v1/app/passkeys/cred_x' },
  { method: 'GET', path: '/v1/app/push/subscriptions' },
  {
    method: 'POST',
    path: '/v1/app/push/subscriptions',
    json: { endpoint: 'https://push.example.com/x', keys: { p256dh: 'x', auth: 'x' } },
  },
  { method: 'DELETE', path: '/v1/app/push/subscriptions/push_x' },
  { method: 'POST', path: '/v1/app/push/subscriptions/push_x/test' },
  { method: 'GET', path: '/v1/app/push/email-reminders' },
  { method: 'PATCH', path: '/v1/app/push/email-reminders', json: { minutes: 5 } },
]

/**
 * Routes anyone may call, without a token or session: health, server info and the API document;
 * the web app's files and screens (the build's own lists); and the flows that take no token by
 * design: login and sign-up, pairing, join links, and answering from a notification (with its
 * capability).
 */
const PUBLIC_ROUTES: Route[] = [
  { method: 'GET', path: '/health' },
  { method: 'GET', path: '/v1/info' },
  { method: 'GET', path: '/v1/openapi.json' },
  {
    method: 'POST',
    path: '/v1/auth/email/start',
    json: { email: 'nobody@example.com', purpose: 'login' },
  },
  {
    method: 'POST',
    path: '/v1/auth/email/verify',
    json: { email: 'nobody@example.com', code: '00000000' },
  },
  { method: 'POST', path: '/v1/auth/passkey/register/options', json: { email: 'a@example.com' } },
  {
    method: 'POST',
    path: '/v1/auth/passkey/register/verify',
    json: { challenge_id: 'x', response: {} },
  },
  { method: 'POST', path: '/v1/auth/passkey/login/options', json: {} },
  {
    method: 'POST',
    path: '/v1/auth/passkey/login/verify',
    json: { challenge_id: 'x', response: {} },
  },
  { method: 'POST', path: '/v1/pair/start', json: { label: 'x' } },
  { method: 'POST', path: '/v1/pair/token', json: { device_code: 'x' } },
  { method: 'POST', path: '/v1/join', json: { code: 'x' } },
  { method: 'POST', path: '/v1/push/answer', json: { capability: 'x', answer: true } },
  ...Object.keys(webFiles).map((path) => ({ method: 'GET', path })),
  ...SPA_ROUTES.map((path) => ({ method: 'GET', path: path.replace('*', 'ch_x') })),
]

/** Sends a route's request with the given Authorization header (or none), and no Origin. */
function call(route: Route, authorization?: string): Promise<Reply> {
  const headers: Record<string, string> = { ...route.headers }
  if (authorization !== undefined) headers.authorization = authorization
  return s.request(route.method, route.path, {
    json: route.json,
    body: route.body,
    headers,
    origin: null,
  })
}

/** Expects `status` with a JSON `{ error: string }` body. */
async function expectError(res: Reply, status: number, what: string): Promise<string> {
  if (res.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${res.status}: ${res.text}`)
  }
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(typeof res.body?.error).toBe('string')
  return res.body.error as string
}

const label = (r: Route) => `${r.method} ${r.path}`

/** Does the SQLite file (with its WAL and shared memory) contain these bytes anywhere? */
function databaseContains(dir: string, needle: string): boolean {
  const bytes = Buffer.from(needle)
  return ['hark.db', 'hark.db-wal', 'hark.db-shm']
    .map((f) => join(dir, f))
    .filter((f) => existsSync(f))
    .some((f) => readFileSync(f).includes(bytes))
}

describe('route coverage', () => {
  test('the lists above cover every authenticated route in the OpenAPI document', async () => {
    s = startTestServer()
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
        .replace(/\/(msg|ch|file|usr|inv|ses|tok|cred|push|sec)_x/g, '/{id}')
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
  test('each route of the app is a row of the tables above (one decision), each row a route', () => {
    s = startTestServer()
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
    s = startTestServer()
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
    s = startTestServer()
    const sessionOnly = PERSON_ROUTES.filter((r) => r.session)
    expect(sessionOnly.length).toBeGreaterThan(0)
    for (const route of PERSON_ROUTES) {
      // A fresh session each time: logging out ends the one it is sent with.
      const { cookie } = s.session()
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
        `Bearer ${addPersonToken(s.ctx, { email: s.ownerEmail }).token}`,
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
    s = startTestServer()
    for (const route of [...AGENT_ROUTES, ...PERSON_ROUTES]) {
      const res = await call(route)
      await expectError(res, 401, label(route))
      expect(res.headers.get('www-authenticate')).toBe('Bearer')
    }
  })

  test('garbage, empty and malformed bearer values → 401', async () => {
    s = startTestServer()
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
    s = startTestServer()
    const { token } = s.addChannel('Schemes')
    const person = addPersonToken(s.ctx, { email: s.ownerEmail }).token
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
    s = startTestServer()
    const { token } = s.addChannel('Tampered')
    const flipped = token.slice(0, -1) + (token.endsWith('a') ? 'b' : 'a')
    for (const bad of [flipped, `${token}x`, token.slice(0, -1), token.toUpperCase()]) {
      await expectError(await call(AGENT_ROUTES[0] as Route, `Bearer ${bad}`), 401, bad)
    }
  })

  test('the scheme is case-insensitive and surrounding spaces are tolerated', async () => {
    s = startTestServer()
    const { token } = s.addChannel('Spaces')
    for (const value of [`bearer ${token}`, `BEARER ${token}`, `Bearer   ${token}  `]) {
      expect((await call({ method: 'GET', path: '/v1/channel' }, value)).status).toBe(200)
    }
  })

  test('a stranger gets 401 before the body is validated', async () => {
    s = startTestServer()
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
    s = startTestServer()
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
    s = startTestServer()
    const person = addPersonToken(s.ctx, { email: s.ownerEmail }).token
    for (const route of AGENT_ROUTES) {
      const error = await expectError(await call(route, `Bearer ${person}`), 403, label(route))
      expect(error).toContain('agent token')
    }
  })

  test('an agent token on every /v1/app route → 403', async () => {
    s = startTestServer()
    const { token } = s.addChannel('Agent')
    for (const route of PERSON_ROUTES) {
      const error = await expectError(await call(route, `Bearer ${token}`), 403, label(route))
      expect(error).toContain('person token')
    }
  })

  test('the wrong kind is refused before the body is validated, and writes nothing', async () => {
    s = startTestServer()
    const person = addPersonToken(s.ctx, { email: s.ownerEmail }).token
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

describe('revoked tokens', () => {
  test('an agent token whose row is revoked → 401 at once, on every agent route', async () => {
    s = startTestServer()
    const { token } = s.addChannel('Soon revoked')
    expect((await call({ method: 'GET', path: '/v1/channel' }, `Bearer ${token}`)).status).toBe(200)
    s.ctx.db.run('UPDATE tokens SET revoked_at = 1')
    for (const route of AGENT_ROUTES) {
      await expectError(await call(route, `Bearer ${token}`), 401, label(route))
    }
    await s.agent.channel().then(
      () => {
        throw new Error('the harness agent token should be revoked too')
      },
      (e: { status: number }) => expect(e.status).toBe(401),
    )
  })

  test('a revoked person token → 401 at once', async () => {
    s = startTestServer()
    const person = addPersonToken(s.ctx, { email: s.ownerEmail })
    const route = PERSON_ROUTES[0] as Route
    expect((await call(route, `Bearer ${person.token}`)).status).toBe(200)
    s.ctx.db.run('UPDATE tokens SET revoked_at = ?1 WHERE id = ?2', [Date.now(), person.row.id])
    for (const r of PERSON_ROUTES) {
      await expectError(await call(r, `Bearer ${person.token}`), 401, label(r))
    }
    // Other tokens are untouched.
    expect((await s.person.channels()).channels.length).toBeGreaterThan(0)
  })

  test('revoking one channel token leaves the other channels working', async () => {
    s = startTestServer()
    const other = s.addChannel('Other')
    s.ctx.db.run('UPDATE tokens SET revoked_at = 1 WHERE channel_id = ?1', [s.channelId])
    expect((await other.agent.channel()).channel.id).toBe(other.channelId)
    expect((await call({ method: 'GET', path: '/v1/channel' })).status).toBe(401)
  })

  test('a token whose channel is gone → 401', async () => {
    s = startTestServer()
    const other = s.addChannel('Doomed')
    s.ctx.db.run('DELETE FROM channels WHERE id = ?1', [other.channelId])
    await expectError(
      await call({ method: 'GET', path: '/v1/channel' }, `Bearer ${other.token}`),
      401,
      'deleted channel',
    )
  })
})

describe('token storage', () => {
  test('tokens carry the hark_agent_ / hark_person_ prefixes', () => {
    s = startTestServer()
    const agent = s.addChannel('Prefix').token
    const person = addPersonToken(s.ctx, { email: s.ownerEmail }).token
    expect(agent).toMatch(/^hark_agent_[0-9A-Za-z]{43}$/)
    expect(person).toMatch(/^hark_person_[0-9A-Za-z]{43}$/)
  })

  test('tokens are stored only as SHA-256 hashes: no plaintext in the SQLite files', async () => {
    s = startTestServer()
    const agent = s.addChannel('Hashed').token
    const person = addPersonToken(s.ctx, { email: s.ownerEmail }).token
    // Use them, so last_used_at and any other write has happened.
    expect((await call({ method: 'GET', path: '/v1/channel' }, `Bearer ${agent}`)).status).toBe(200)
    expect((await call(PERSON_ROUTES[0] as Route, `Bearer ${person}`)).status).toBe(200)

    for (const token of [agent, person]) {
      expect(databaseContains(s.dir, token)).toBe(false)
      // Not even the secret part without its prefix, nor its hex hash as text.
      expect(databaseContains(s.dir, token.replace(/^hark_(agent|person)_/, ''))).toBe(false)
      const digest = createHash('sha256').update(token).digest()
      const row = s.ctx.db
        .query<{ kind: string }, [Uint8Array]>('SELECT kind FROM tokens WHERE hash = ?1')
        .get(new Uint8Array(digest))
      expect(row?.kind).toBe(token.startsWith('hark_agent_') ? 'agent' : 'person')
    }
    // After a checkpoint the main file holds everything; still no plaintext.
    s.ctx.db.run('PRAGMA wal_checkpoint(TRUNCATE)')
    expect(databaseContains(s.dir, agent)).toBe(false)
    expect(databaseContains(s.dir, person)).toBe(false)
  })

  test('every stored hash is 32 bytes', () => {
    s = startTestServer()
    s.addChannel('Sized')
    const rows = s.ctx.db
      .query<{ n: number }, []>('SELECT length(hash) AS n FROM tokens')
      .all()
      .map((r) => r.n)
    expect(rows.length).toBeGreaterThanOrEqual(3)
    expect(rows.every((n) => n === 32)).toBe(true)
  })
})

describe('write rate limit (counted by the agent guard)', () => {
  test('beyond the limit: 429 with Retry-After; reads go on; other channels are independent', async () => {
    const clock = new TestClock(1_000_000)
    s = startTestServer({ writeLimit: 3, clock })
    const other = s.addChannel('Other')
    for (let i = 0; i < 3; i++) await s.agent.send({ body: { text: `m${i}` } })
    const res = await call(
      { method: 'POST', path: '/v1/messages', json: { body: { text: 'one more' } } },
      `Bearer ${s.agentToken}`,
    )
    await expectError(res, 429, 'fourth write')
    const retry = Number(res.headers.get('retry-after'))
    expect(Number.isInteger(retry) && retry >= 1).toBe(true)
    // Reads are not writes.
    expect((await s.agent.feed({ peek: true })).messages).toHaveLength(3)
    expect((await s.agent.channel()).channel.id).toBe(s.channelId)
    // Another channel has its own bucket.
    await other.agent.send({ body: { text: 'fine' } })
    // Refused writes wrote nothing.
    expect((await s.agent.feed({ peek: true })).messages).toHaveLength(3)
    // After Retry-After seconds (on the test's clock), writing works again.
    clock.advance(retry * 1000)
    await s.agent.send({ body: { text: 'later' } })
  })

  test('a stranger or a person token does not use up the channel budget', async () => {
    s = startTestServer({ writeLimit: 1, clock: new TestClock(5_000_000) })
    const person = addPersonToken(s.ctx, { email: s.ownerEmail }).token
    const send = { method: 'POST', path: '/v1/messages', json: { body: { text: 'x' } } }
    for (let i = 0; i < 5; i++) {
      expect((await call(send)).status).toBe(401)
      expect((await call(send, `Bearer ${person}`)).status).toBe(403)
    }
    await s.agent.send({ body: { text: 'the one write' } })
  })
})
