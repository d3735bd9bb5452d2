import { afterEach, describe, expect, test } from 'bun:test'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count, DAY } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

interface SessionView {
  id: string
  user_agent: string | null
  created_at: number
  last_seen_at: number
  current: boolean
}

describe('GET /v1/app/sessions', () => {
  test('lists my sessions, newest use first, marking the current one, with no secret', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const laptop = await s.session(s.ownerEmail, 'Firefox on a laptop')
    clock.advance(1000)
    const phone = await s.session(s.ownerEmail, 'Safari on a phone')
    await s.addPerson('bob@example.com')
    await s.session('bob@example.com')
    const res = await s.request('GET', '/v1/app/sessions', { cookie: laptop.cookie })
    expect(res.status).toBe(200)
    const sessions = res.body.sessions as SessionView[]
    expect(sessions.map((x) => x.id)).toEqual([phone.sessionId, laptop.sessionId])
    expect(sessions.map((x) => x.current)).toEqual([false, true])
    expect(sessions[1]).toEqual({
      id: laptop.sessionId,
      user_agent: 'Firefox on a laptop',
      created_at: clock.ms - 1000,
      last_seen_at: clock.ms - 1000,
      current: true,
    })
    const text = JSON.stringify(res.body)
    expect(text).not.toContain(laptop.cookie.split('=')[1])
    expect(text).not.toContain('hash')
    const fromPhone = await s.request('GET', '/v1/app/sessions', { cookie: phone.cookie })
    expect((fromPhone.body.sessions as SessionView[]).find((x) => x.current)?.id).toBe(
      phone.sessionId,
    )
  })

  test('leaves out expired sessions, and a new login sweeps them away', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    await s.session(s.ownerEmail, 'old laptop')
    clock.advance(30 * DAY)
    const fresh = await s.session(s.ownerEmail, 'new phone')
    const res = await s.request('GET', '/v1/app/sessions', { cookie: fresh.cookie })
    expect((res.body.sessions as SessionView[]).map((x) => x.user_agent)).toEqual(['new phone'])
    expect(count(s.ctx, 'sessions')).toBe(1)
  })

  test('with a person token, none is current', async () => {
    s = await startTestServer()
    await s.session()
    const { sessions } = await s.person.call<{ sessions: SessionView[] }>('GET', '/v1/app/sessions')
    expect(sessions).toHaveLength(1)
    expect(sessions[0]?.current).toBe(false)
  })

  test('keeps at most 300 characters of the user agent', async () => {
    s = await startTestServer()
    await s.session(s.ownerEmail, 'x'.repeat(1000))
    const { sessions } = await s.person.call<{ sessions: SessionView[] }>('GET', '/v1/app/sessions')
    expect(sessions[0]?.user_agent).toHaveLength(300)
  })

  test('without a login it is 401', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/sessions'), 401)
  })
})

describe('DELETE /v1/app/sessions/:id', () => {
  test('ends another of my sessions at once', async () => {
    s = await startTestServer()
    const laptop = await s.session()
    const phone = await s.session()
    const res = await s.request('DELETE', `/v1/app/sessions/${phone.sessionId}`, {
      cookie: laptop.cookie,
    })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true })
    expect((await s.request('GET', '/v1/app/me', { cookie: phone.cookie })).status).toBe(401)
    expect((await s.request('GET', '/v1/app/me', { cookie: laptop.cookie })).status).toBe(200)
  })

  test('an unknown id, or one already ended, is 404', async () => {
    s = await startTestServer()
    const a = await s.session()
    const b = await s.session()
    await s.person.call('DELETE', `/v1/app/sessions/${b.sessionId}`)
    await failsWith(s.person.call('DELETE', `/v1/app/sessions/${b.sessionId}`), 404)
    await failsWith(s.person.call('DELETE', '/v1/app/sessions/ses_nope'), 404)
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(200)
  })

  test("another person's session id is 404, and their session lives on", async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const bob = await s.session('bob@example.com')
    const owner = await s.session()
    const res = await s.request('DELETE', `/v1/app/sessions/${bob.sessionId}`, {
      cookie: owner.cookie,
    })
    expect(res.status).toBe(404)
    await failsWith(s.person.call('DELETE', `/v1/app/sessions/${bob.sessionId}`), 404)
    expect((await s.request('GET', '/v1/app/me', { cookie: bob.cookie })).status).toBe(200)
  })

  test('ending the current session logs this browser out', async () => {
    s = await startTestServer()
    const a = await s.session()
    const res = await s.request('DELETE', `/v1/app/sessions/${a.sessionId}`, { cookie: a.cookie })
    expect(res.status).toBe(200)
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(401)
  })

  test('needs the app origin with a cookie', async () => {
    s = await startTestServer()
    const a = await s.session()
    const b = await s.session()
    const res = await s.request('DELETE', `/v1/app/sessions/${b.sessionId}`, {
      cookie: a.cookie,
      origin: null,
    })
    expect(res.status).toBe(403)
    expect((await s.request('GET', '/v1/app/me', { cookie: b.cookie })).status).toBe(200)
  })
})

describe('POST /v1/app/logout', () => {
  test('ends this session and clears the cookie; other sessions live on', async () => {
    s = await startTestServer()
    const a = await s.session()
    const b = await s.session()
    const res = await s.request('POST', '/v1/app/logout', { cookie: a.cookie })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true })
    const cleared = res.headers.get('set-cookie') as string
    expect(cleared).toStartWith('hark_session=;')
    expect(cleared).toContain('Max-Age=0')
    expect(cleared).toContain('Path=/')
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(401)
    expect((await s.request('GET', '/v1/app/me', { cookie: b.cookie })).status).toBe(200)
  })

  test('a second logout with the dead cookie is 401', async () => {
    s = await startTestServer()
    const a = await s.session()
    await s.request('POST', '/v1/app/logout', { cookie: a.cookie })
    expect((await s.request('POST', '/v1/app/logout', { cookie: a.cookie })).status).toBe(401)
  })

  test('with a person token, it answers ok and the token keeps working', async () => {
    s = await startTestServer()
    const a = await s.session()
    const res = await s.person.raw('POST', '/v1/app/logout')
    expect(res.status).toBe(200)
    expect(res.headers.get('set-cookie')).toContain('Max-Age=0')
    expect((await s.person.channels()).channels).toHaveLength(1)
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(200)
  })

  test('without a login it is 401; from a foreign origin 403 and the session lives', async () => {
    s = await startTestServer()
    expect((await s.request('POST', '/v1/app/logout')).status).toBe(401)
    const a = await s.session()
    const res = await s.request('POST', '/v1/app/logout', {
      cookie: a.cookie,
      origin: 'https://evil.example',
    })
    expect(res.status).toBe(403)
    expect(res.headers.get('set-cookie')).toBeNull()
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(200)
  })
})

describe('POST /v1/app/logout-all', () => {
  test("ends every one of my sessions, and only mine, and clears this browser's cookie", async () => {
    s = await startTestServer()
    const a = await s.session()
    const b = await s.session()
    const c = await s.session()
    await s.addPerson('bob@example.com')
    const bob = await s.session('bob@example.com')
    const res = await s.request('POST', '/v1/app/logout-all', { cookie: a.cookie })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ok: true })
    expect(res.headers.get('set-cookie')).toContain('Max-Age=0')
    for (const x of [a, b, c]) {
      expect((await s.request('GET', '/v1/app/me', { cookie: x.cookie })).status).toBe(401)
    }
    expect((await s.request('GET', '/v1/app/me', { cookie: bob.cookie })).status).toBe(200)
    expect(count(s.ctx, 'sessions', 'user_id = ?1', a.user.id)).toBe(0)
  })

  test('from a person token it ends every session; tokens are managed apart', async () => {
    s = await startTestServer()
    const a = await s.session()
    await s.person.call('POST', '/v1/app/logout-all')
    expect((await s.request('GET', '/v1/app/me', { cookie: a.cookie })).status).toBe(401)
    expect((await s.person.channels()).channels).toHaveLength(1)
  })

  test('without a login it is 401', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('POST', '/v1/app/logout-all'), 401)
  })
})
