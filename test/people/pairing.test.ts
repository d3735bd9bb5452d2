import { afterEach, describe, expect, test } from 'bun:test'
import type { PairingStart } from '../../src/access/enrol/pairing.ts'
import { LIMITS } from '../../src/messages/limits.ts'
import { BASE, failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count, fieldOf, settledWithin } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const MINUTE = 60_000

interface PollResult {
  status: 'pending' | 'approved' | 'denied' | 'expired'
  token?: string
  channel?: { id: string; label: string }
}

interface PairingView {
  user_code: string
  label: string | null
  status: string
  created_at: number
  expires_at: number
}

/** The CLI's side: no token at all. */
const cli = () => s.raw()
const start = (json?: unknown) => cli().call<PairingStart>('POST', '/v1/pair/start', { json })
const poll = (deviceCode: unknown, wait?: number, signal?: AbortSignal) =>
  cli().call<PollResult>('POST', '/v1/pair/token', {
    json: { device_code: deviceCode },
    query: { wait },
    signal,
  })

/** The person's side: seeing and denying by person token, approving from the app (a session). */
const see = (code: string) =>
  s.person.call<{ pairing: PairingView }>('GET', `/v1/app/pairings/${encodeURIComponent(code)}`)
const approve = (code: string, json?: unknown, person = s.sessionClient()) =>
  person.call<{ pairing: PairingView; channel: { id: string; label: string } }>(
    'POST',
    `/v1/app/pairings/${encodeURIComponent(code)}/approve`,
    { json },
  )
const deny = (code: string) =>
  s.person.call<{ pairing: PairingView }>(
    'POST',
    `/v1/app/pairings/${encodeURIComponent(code)}/deny`,
  )

describe('POST /v1/pair/start', () => {
  test('answers a device code, a short user code and the links, without a token', async () => {
    s = startTestServer()
    const p = await start({ label: 'laptop: repo' })
    expect(p.device_code).toMatch(/^[0-9A-Za-z]{43}$/)
    expect(p.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(p.verification_uri).toBe(`${BASE}/pair`)
    expect(p.verification_uri_complete).toBe(`${BASE}/pair?code=${p.user_code}`)
    expect(p.expires_in).toBe(600)
    expect(p.interval).toBe(5)
  })

  test('needs no body; each start gets its own codes', async () => {
    s = startTestServer()
    const a = await start()
    const b = await start({})
    expect(a.device_code).not.toBe(b.device_code)
    expect(a.user_code).not.toBe(b.user_code)
    expect((await see(a.user_code)).pairing.label).toBeNull()
  })

  test('stores the device code only as a hash', async () => {
    s = startTestServer()
    const p = await start()
    const rows = s.ctx.db.query('SELECT * FROM pairings').all()
    expect(JSON.stringify(rows)).not.toContain(p.device_code)
  })

  test('an invalid label is 400 naming label, and nothing is stored', async () => {
    s = startTestServer()
    for (const label of ['', '   ', 'x'.repeat(LIMITS.labelChars + 1), 42, null, ['a']]) {
      const res = await cli().raw('POST', '/v1/pair/start', { json: { label } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('label')
    }
    expect(count(s.ctx, 'pairings')).toBe(0)
  })

  // Elysia drops a malformed optional body; `optionalJson` parses these bodies strictly.
  test('a body that is not JSON is 400', async () => {
    s = startTestServer()
    const res = await cli().raw('POST', '/v1/pair/start', {
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(400)
  })

  test('is rate-limited: the 11th start in a minute is 429 with Retry-After', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    for (let i = 0; i < 10; i++) await start()
    const err = await failsWith(start(), 429)
    const retry = Number(err.headers.get('retry-after'))
    expect(Number.isInteger(retry)).toBe(true)
    expect(retry).toBeGreaterThanOrEqual(1)
    expect(retry).toBeLessThanOrEqual(60)
    expect(count(s.ctx, 'pairings')).toBe(10)
    clock.advance(MINUTE)
    await start()
  })

  test('the limit is its own: agent writes are not counted against it', async () => {
    const clock = new TestClock()
    s = startTestServer({ writeLimit: 120, clock })
    for (let i = 0; i < 10; i++) await start()
    await s.agent.send({ body: { text: 'still fine' } })
  })
})

describe('the whole device flow', () => {
  test('start → person sees and approves with a label → the waiting CLI gets a working token', async () => {
    s = startTestServer()
    const p = await start({ label: 'suggested' })
    const seen = await see(p.user_code)
    expect(seen.pairing).toMatchObject({
      user_code: p.user_code,
      label: 'suggested',
      status: 'pending',
    })
    expect(seen.pairing.expires_at - seen.pairing.created_at).toBe(10 * MINUTE)
    const waiting = poll(p.device_code, 5)
    const approved = await approve(p.user_code, { label: 'Build bot' })
    expect(approved.pairing.status).toBe('approved')
    expect(approved.channel.label).toBe('Build bot')
    const result = await waiting
    expect(result.status).toBe('approved')
    expect(result.token).toMatch(/^hark_agent_[0-9A-Za-z]{43}$/)
    expect(result.channel).toEqual(approved.channel)
    const { channel } = await s.agentClient(result.token).channel()
    expect(channel.id).toBe(approved.channel.id)
    expect(channel.label).toBe('Build bot')
    // It is the approving person's channel.
    const { channels } = await s.person.channels()
    expect(channels.map((c) => c.id)).toContain(approved.channel.id)
  })

  test('a held long-poll is woken by the approval, not by its timeout', async () => {
    s = startTestServer()
    const p = await start()
    const waiting = poll(p.device_code, 50)
    await approve(p.user_code)
    const result = await settledWithin(waiting, 10_000)
    expect(result).not.toBe('pending')
    expect((result as PollResult).status).toBe('approved')
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('the token is handed out once: a second poll is 404', async () => {
    s = startTestServer()
    const p = await start()
    await approve(p.user_code)
    const first = await poll(p.device_code)
    expect(first.status).toBe('approved')
    await failsWith(poll(p.device_code), 404)
    await failsWith(poll(p.device_code, 1), 404)
    expect(count(s.ctx, 'tokens', 'channel_id = ?1', first.channel?.id as string)).toBe(1)
  })

  test('an approval before the CLI polls is redeemed by its first poll', async () => {
    s = startTestServer()
    const p = await start({ label: 'From CLI' })
    const approved = await approve(p.user_code)
    expect(approved.channel.label).toBe('From CLI')
    const result = await poll(p.device_code, 0)
    expect(result.status).toBe('approved')
    expect((await s.agentClient(result.token).channel()).channel.label).toBe('From CLI')
  })

  test("without a label from either side, the channel is 'Agent'", async () => {
    s = startTestServer()
    const p = await start()
    expect((await approve(p.user_code)).channel.label).toBe('Agent')
  })

  test('the new token shows in the token list under the channel, without its secret', async () => {
    s = startTestServer()
    const p = await start()
    const { channel } = await approve(p.user_code, { label: 'Paired' })
    const { token } = await poll(p.device_code)
    const { tokens } = await s.person.call<{ tokens: { channel_id: string; label: string }[] }>(
      'GET',
      '/v1/app/tokens',
    )
    expect(tokens.find((t) => t.channel_id === channel.id)?.label).toBe('Paired')
    expect(JSON.stringify(tokens)).not.toContain(token as string)
  })

  test('a pending poll with wait=0 (or none) answers pending at once', async () => {
    s = startTestServer()
    const p = await start()
    expect(await poll(p.device_code, 0)).toEqual({ status: 'pending' })
    expect(await poll(p.device_code)).toEqual({ status: 'pending' })
    expect(await poll(p.device_code, 0.2)).toEqual({ status: 'pending' })
    expect((await see(p.user_code)).pairing.status).toBe('pending')
  })

  test('deny: the waiting CLI hears denied, and no channel is made', async () => {
    s = startTestServer()
    const p = await start()
    const waiting = poll(p.device_code, 50)
    const denied = await deny(p.user_code)
    expect(denied.pairing.status).toBe('denied')
    const result = await settledWithin(waiting, 10_000)
    expect(result).toEqual({ status: 'denied' })
    expect(await poll(p.device_code)).toEqual({ status: 'denied' })
    expect((await s.person.channels()).channels).toHaveLength(1)
  })

  test('an answered pairing cannot be answered again (404: it is no longer pending)', async () => {
    s = startTestServer()
    const a = await start()
    await approve(a.user_code)
    await failsWith(approve(a.user_code), 404)
    await failsWith(deny(a.user_code), 404)
    await failsWith(see(a.user_code), 404)
    const b = await start()
    await deny(b.user_code)
    await failsWith(approve(b.user_code), 404)
    expect((await s.person.channels()).channels).toHaveLength(2)
  })

  test('expires after 10 minutes: the poll says expired, the user code is 404', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    const p = await start()
    clock.advance(10 * MINUTE - 1)
    expect((await poll(p.device_code)).status).toBe('pending')
    expect((await see(p.user_code)).pairing.status).toBe('pending')
    clock.advance(1)
    expect(await poll(p.device_code)).toEqual({ status: 'expired' })
    expect(await poll(p.device_code, 1)).toEqual({ status: 'expired' })
    await failsWith(see(p.user_code), 404)
    await failsWith(approve(p.user_code), 404)
    await failsWith(deny(p.user_code), 404)
    expect((await s.person.channels()).channels).toHaveLength(1)
  })

  test('an expired pairing still says expired after later starts sweep the table', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    const p = await start()
    clock.advance(10 * MINUTE)
    await start()
    expect(await poll(p.device_code)).toEqual({ status: 'expired' })
    // Long after, it is swept and forgotten.
    clock.advance(60 * MINUTE)
    await start()
    await failsWith(poll(p.device_code), 404)
    expect(count(s.ctx, 'pairings')).toBe(2)
  })

  test('user codes accept lower case, no dash, and spaces', async () => {
    s = startTestServer()
    const p = await start()
    const [left, right] = p.user_code.split('-') as [string, string]
    for (const code of [
      p.user_code.toLowerCase(),
      `${left}${right}`,
      `${left}${right}`.toLowerCase(),
      `${left} ${right}`.toLowerCase(),
    ]) {
      expect((await see(code)).pairing.user_code).toBe(p.user_code)
    }
    const { channel } = await approve(`${left}${right}`.toLowerCase(), { label: 'lower' })
    expect(channel.label).toBe('lower')
    expect((await poll(p.device_code)).channel?.id).toBe(channel.id)
  })
})

describe('POST /v1/pair/token errors', () => {
  test('an unknown device code is 404; so is the user code in its place', async () => {
    s = startTestServer()
    const p = await start()
    await failsWith(poll('nope'), 404)
    await failsWith(poll(p.user_code), 404)
  })

  test('a missing, empty or non-string device_code is 400 naming device_code', async () => {
    s = startTestServer()
    for (const json of [{}, { device_code: '' }, { device_code: 42 }, { device_code: null }]) {
      const res = await cli().raw('POST', '/v1/pair/token', { json })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('device_code')
    }
    const none = await cli().raw('POST', '/v1/pair/token')
    expect(none.status).toBe(400)
  })

  test('a wait that is not a non-negative number is 400 naming wait', async () => {
    s = startTestServer()
    const p = await start()
    for (const wait of ['-1', 'abc', 'Infinity', '0x10']) {
      const res = await cli().raw('POST', '/v1/pair/token', {
        json: { device_code: p.device_code },
        query: { wait },
      })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('wait')
    }
  })
})

describe('the person side of pairing', () => {
  test('an unknown user code is 404 on GET, approve and deny', async () => {
    s = startTestServer()
    await failsWith(see('BCDF-GHJK'), 404)
    await failsWith(approve('BCDF-GHJK'), 404)
    await failsWith(deny('not-a-code'), 404)
  })

  test('an invalid approval label is 400 naming label, and the pairing stays pending', async () => {
    s = startTestServer()
    const p = await start()
    for (const label of ['', '  ', 'x'.repeat(LIMITS.labelChars + 1), 7]) {
      const res = await s.sessionClient().raw('POST', `/v1/app/pairings/${p.user_code}/approve`, {
        json: { label },
      })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('label')
    }
    expect((await see(p.user_code)).pairing.status).toBe('pending')
    expect((await s.person.channels()).channels).toHaveLength(1)
  })

  test('a person token cannot approve (403): no channel, no token, the pairing stays pending', async () => {
    s = startTestServer()
    const p = await start()
    const e = await failsWith(approve(p.user_code, { label: 'Mine' }, s.person), 403)
    expect(e.error).toBe(
      'approving a pairing needs a browser session: log in to the app; a person token cannot do this',
    )
    expect((await see(p.user_code)).pairing.status).toBe('pending')
    expect((await s.person.channels()).channels).toHaveLength(1)
    expect(await poll(p.device_code, 0)).toEqual({ status: 'pending' })
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = startTestServer()
    const p = await start()
    await failsWith(s.raw().call('GET', `/v1/app/pairings/${p.user_code}`), 401)
    await failsWith(s.raw().call('POST', `/v1/app/pairings/${p.user_code}/approve`), 401)
    await failsWith(s.raw().call('POST', `/v1/app/pairings/${p.user_code}/deny`), 401)
    const agent = s.agent
    await failsWith(agent.call('GET', `/v1/app/pairings/${p.user_code}`), 403)
    await failsWith(agent.call('POST', `/v1/app/pairings/${p.user_code}/approve`), 403)
    expect((await see(p.user_code)).pairing.status).toBe('pending')
  })

  test('from the web app: GET with the cookie alone, approve only from the app origin', async () => {
    s = startTestServer()
    const p = await start()
    const { cookie } = s.session()
    const seen = await s.request('GET', `/v1/app/pairings/${p.user_code}`, {
      cookie,
      origin: null,
    })
    expect(seen.status).toBe(200)
    for (const origin of [null, 'null', 'https://evil.example']) {
      const res = await s.request('POST', `/v1/app/pairings/${p.user_code}/approve`, {
        cookie,
        origin,
      })
      expect(res.status).toBe(403)
    }
    const denied = await s.request('POST', `/v1/app/pairings/${p.user_code}/deny`, {
      cookie,
      origin: 'https://evil.example',
    })
    expect(denied.status).toBe(403)
    const ok = await s.request('POST', `/v1/app/pairings/${p.user_code}/approve`, {
      cookie,
      json: { label: 'From the app' },
    })
    expect(ok.status).toBe(200)
    expect((await poll(p.device_code)).channel?.label).toBe('From the app')
  })

  test("another person's approval makes the channel theirs, not the owner's", async () => {
    s = startTestServer()
    const bob = s.addPerson('bob@example.com')
    const p = await start()
    const approved = await s
      .sessionClient('bob@example.com')
      .call<{ channel: { id: string } }>('POST', `/v1/app/pairings/${p.user_code}/approve`)
    const result = await poll(p.device_code)
    expect((await bob.channels()).channels.map((c) => c.id)).toEqual([approved.channel.id])
    expect((await s.person.channels()).channels.map((c) => c.id)).toEqual([s.channelId])
    expect(result.channel?.id).toBe(approved.channel.id)
  })

  test('if the channel is deleted between approval and the poll, the CLI hears 404 or denied', async () => {
    s = startTestServer()
    const p = await start()
    const { channel } = await approve(p.user_code)
    await s.person.call('DELETE', `/v1/app/channels/${channel.id}`)
    const res = await cli().raw('POST', '/v1/pair/token', { json: { device_code: p.device_code } })
    // The pairing row goes with its channel (cascade); either way no token is made.
    expect([200, 404]).toContain(res.status)
    if (res.status === 200) expect(((await res.json()) as PollResult).status).toBe('denied')
    expect(count(s.ctx, 'tokens', 'channel_id = ?1', channel.id)).toBe(0)
  })
})
