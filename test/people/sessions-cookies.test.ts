import { afterEach, describe, expect, test } from 'bun:test'
import { startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count, DAY } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

describe('the session cookie', () => {
  test('logs the person in on /v1/app routes', async () => {
    s = await startTestServer()
    const { cookie, user } = await s.session()
    const me = await s.request('GET', '/v1/app/me', { cookie })
    expect(me.status).toBe(200)
    expect(me.body.user).toMatchObject({ id: user.id, email: s.ownerEmail, is_owner: true })
    const channels = await s.request('GET', '/v1/app/channels', { cookie })
    expect(channels.body.channels.map((c: { id: string }) => c.id)).toEqual([s.channelId])
  })

  test('is set HttpOnly, SameSite=Strict, Path=/ for 30 days, without Secure over http', async () => {
    s = await startTestServer()
    const { setCookie } = await s.session()
    const parts = setCookie.split('; ')
    expect(parts[0]).toMatch(/^hark_session=[0-9A-Za-z]{43}$/)
    expect(parts).toContain('HttpOnly')
    expect(parts).toContain('SameSite=Strict')
    expect(parts).toContain('Path=/')
    expect(parts).toContain(`Max-Age=${30 * 24 * 3600}`)
    expect(parts).not.toContain('Secure')
    expect(setCookie).not.toContain('Domain')
  })

  test('over https it is __Host-hark_session with Secure, and only that name is read', async () => {
    s = await startTestServer({ baseUrl: 'https://hark.example.com' })
    const { setCookie, cookie } = await s.session()
    expect(setCookie).toStartWith('__Host-hark_session=')
    expect(setCookie.split('; ')).toContain('Secure')
    expect((await s.request('GET', '/v1/app/me', { cookie })).status).toBe(200)
    const plain = cookie.replace('__Host-hark_session=', 'hark_session=')
    expect((await s.request('GET', '/v1/app/me', { cookie: plain })).status).toBe(401)
    // Writes need the https origin of the base URL.
    const write = (origin: string) =>
      s.request('POST', '/v1/app/channels/x/read', { cookie, origin })
    expect((await write('http://hark.example.com')).status).toBe(403)
    expect((await write('https://hark.example.com')).status).toBe(404)
  })

  test('is found among other cookies', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const res = await s.request('GET', '/v1/app/me', { cookie: `theme=dark; ${cookie}; x=1` })
    expect(res.status).toBe(200)
  })

  test('no cookie, an unknown one, an empty one or a look-alike name is 401', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const secret = cookie.split('=')[1] as string
    for (const c of [
      undefined,
      'hark_session=nope',
      'hark_session=',
      `xhark_session=${secret}`,
      `Hark_Session=${secret}`,
      `hark_session=${secret}x`,
    ]) {
      const res = await s.request('GET', '/v1/app/me', { cookie: c })
      expect(res.status).toBe(401)
      expect(res.body.error).toBeString()
    }
  })

  test('is never stored: the table holds only its hash', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const secret = cookie.split('=')[1] as string
    const rows = s.ctx.db.query('SELECT * FROM sessions').all()
    expect(JSON.stringify(rows)).not.toContain(secret)
  })

  test('expires 30 days after its last use; use extends it', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const a = await s.session()
    const b = await s.session()
    clock.advance(20 * DAY)
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(200)
    clock.advance(10 * DAY)
    // b was last used 30 days ago; a 10 days ago.
    expect((await s.request('GET', '/v1/app/me', { cookie: b.cookie })).status).toBe(401)
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(200)
    clock.advance(30 * DAY)
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(401)
  })

  test('when use extends the session, the reply re-sends the cookie with a fresh Max-Age', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const a = await s.session()
    const me = () => s.request('GET', '/v1/app/me', { cookie: a.cookie })
    // Within the hour after login (or after the last extension) nothing is re-sent.
    expect((await me()).headers.get('set-cookie')).toBeNull()
    clock.advance(3600_000)
    expect((await me()).headers.get('set-cookie')).toBeNull()
    clock.advance(1)
    // Same cookie, same attributes, 30 days again from now.
    expect((await me()).headers.get('set-cookie')).toBe(a.setCookie)
    expect((await me()).headers.get('set-cookie')).toBeNull()
    // Any route behind the person guard does it, writes too.
    clock.advance(2 * 3600_000)
    const write = await s.request('PATCH', `/v1/app/channels/${s.channelId}`, {
      cookie: a.cookie,
      json: { label: 'Renamed' },
    })
    expect(write.status).toBe(200)
    expect(write.headers.get('set-cookie')).toBe(a.setCookie)
    // A person token gets no cookie.
    clock.advance(2 * 3600_000)
    const byToken = await s.person.raw('GET', '/v1/app/me')
    expect(byToken.headers.get('set-cookie')).toBeNull()
  })

  test('a person active every day stays logged in past 30 days, as the browser keeps the cookie', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const a = await s.session()
    const maxAge = (setCookie: string) => Number(/Max-Age=(\d+)/.exec(setCookie)?.[1])
    // The browser's view: the cookie is dropped Max-Age seconds after it was last set.
    let dropAt = clock.ms + maxAge(a.setCookie) * 1000
    for (let day = 1; day <= 45; day++) {
      clock.advance(DAY)
      expect(clock.ms).toBeLessThan(dropAt)
      const res = await s.request('GET', '/v1/app/me', { cookie: a.cookie })
      expect(res.status).toBe(200)
      const set = res.headers.get('set-cookie')
      if (set) dropAt = clock.ms + maxAge(set) * 1000
    }
  })

  test('logging out after an extension still clears the cookie', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const a = await s.session()
    clock.advance(2 * 3600_000)
    const out = await s.request('POST', '/v1/app/logout', { cookie: a.cookie })
    expect(out.status).toBe(200)
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0')
  })

  test('an agent token on /v1/app is 403, whatever cookie comes with it', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const { token } = await s.addChannel('Extra')
    const res = await s.request('GET', '/v1/app/me', {
      cookie,
      headers: { authorization: `Bearer ${token}` },
    })
    expect(res.status).toBe(403)
  })

  test('an Authorization header wins over the cookie: a bad token is 401 despite a good cookie', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const res = await s.request('GET', '/v1/app/me', {
      cookie,
      headers: { authorization: 'Bearer hark_person_nope' },
    })
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Bearer')
  })

  test("a removed person's sessions end with them", async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const bob = await s.session('bob@example.com')
    expect((await s.request('GET', '/v1/app/me', { cookie: bob.cookie })).status).toBe(200)
    const owner = await s.session()
    const del = await s.request('DELETE', `/v1/app/people/${bob.user.id}`, {
      cookie: owner.cookie,
    })
    expect(del.status).toBe(200)
    expect((await s.request('GET', '/v1/app/me', { cookie: bob.cookie })).status).toBe(401)
    expect(count(s.ctx, 'sessions', 'user_id = ?1', bob.user.id)).toBe(0)
  })
})

describe('cookie writes and the Origin check', () => {
  const write = (cookie: string, origin: string | null) =>
    s.request('POST', `/v1/app/channels/${s.channelId}/messages`, {
      cookie,
      origin,
      json: { body: { text: 'hi' } },
    })

  test('the app origin may write', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const res = await write(cookie, 'http://hark.test')
    expect(res.status).toBe(200)
    expect(res.body.message.sender).toBe('human')
  })

  test('no Origin, a foreign one, `null`, or another scheme or port: 403 and nothing written', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    for (const origin of [
      null,
      'https://evil.example',
      'null',
      'https://hark.test',
      'http://hark.test:8080',
      'http://sub.hark.test',
      'http://hark.test.evil.example',
      '',
    ]) {
      const res = await write(cookie, origin)
      expect(res.status).toBe(403)
      expect(res.body.error).toContain('Origin')
    }
    expect((await s.agent.feed()).messages).toEqual([])
  })

  test('every cookie write is checked: PATCH, DELETE and POST', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const other = await s.addChannel('Other')
    const cases: [string, string, unknown][] = [
      ['PATCH', `/v1/app/channels/${s.channelId}`, { label: 'x' }],
      ['DELETE', `/v1/app/channels/${other.channelId}`, undefined],
      ['POST', '/v1/app/logout', undefined],
      ['POST', '/v1/app/logout-all', undefined],
      ['POST', '/v1/app/tokens', { label: 'x' }],
      ['PATCH', '/v1/app/settings', { registration: 'open' }],
    ]
    for (const [method, path, json] of cases) {
      const res = await s.request(method, path, { cookie, origin: 'https://evil.example', json })
      expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 403`)
    }
    // Nothing happened: the session lives, the channel kept its name, the other still exists.
    expect((await s.request('GET', '/v1/app/me', { cookie })).status).toBe(200)
    const { channels } = await s.person.channels()
    expect(channels.map((c) => c.label).sort()).toEqual(['Other', 'Test agent'])
    expect((await s.request('GET', '/v1/app/settings', { cookie })).body.registration).toBe(
      'closed',
    )
  })

  test('a malformed body from a foreign origin is 403, not a parse error', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const res = await s.request('POST', '/v1/app/tokens', {
      cookie,
      origin: 'https://evil.example',
      body: '{not json',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(403)
  })

  test('GETs need no Origin, and a foreign one does not matter', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    for (const origin of [null, 'https://evil.example', 'null']) {
      expect((await s.request('GET', '/v1/app/me', { cookie, origin })).status).toBe(200)
      expect((await s.request('GET', '/v1/app/sessions', { cookie, origin })).status).toBe(200)
    }
  })

  test('person-token writes need no Origin (scripts are not browsers)', async () => {
    s = await startTestServer()
    const res = await s.person.raw('POST', `/v1/app/channels/${s.channelId}/messages`, {
      json: { body: { text: 'from a script' } },
    })
    expect(res.status).toBe(200)
  })
})
