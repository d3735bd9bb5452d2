import { afterEach, describe, expect, test } from 'bun:test'
import { LIMITS } from '../../src/messages/limits.ts'
import { BASE, failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { MINUTE, type PollResult, pairingCalls } from './calls.ts'
import { count, fieldOf, settledWithin } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const { cli, start, poll, see, approve, deny } = pairingCalls(() => s)

describe('POST /v1/pair/start', () => {
  test('answers a device code, a short user code and the links, without a token', async () => {
    s = await startTestServer()
    const p = await start({ label: 'laptop: repo' })
    expect(p.device_code).toMatch(/^[0-9A-Za-z]{43}$/)
    expect(p.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/)
    expect(p.verification_uri).toBe(`${BASE}/pair`)
    expect(p.verification_uri_complete).toBe(`${BASE}/pair?code=${p.user_code}`)
    expect(p.expires_in).toBe(600)
    expect(p.interval).toBe(5)
  })

  test('needs no body; each start gets its own codes', async () => {
    s = await startTestServer()
    const a = await start()
    const b = await start({})
    expect(a.device_code).not.toBe(b.device_code)
    expect(a.user_code).not.toBe(b.user_code)
    expect((await see(a.user_code)).pairing.label).toBeNull()
  })

  test('stores the device code only as a hash', async () => {
    s = await startTestServer()
    const p = await start()
    const rows = s.ctx.db.query('SELECT * FROM pairings').all()
    expect(JSON.stringify(rows)).not.toContain(p.device_code)
  })

  test('an invalid label is 400 naming label, and nothing is stored', async () => {
    s = await startTestServer()
    for (const label of ['', '   ', 'x'.repeat(LIMITS.labelChars + 1), 42, null, ['a']]) {
      const res = await cli().raw('POST', '/v1/pair/start', { json: { label } })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('label')
    }
    expect(count(s.ctx, 'pairings')).toBe(0)
  })

  // Elysia drops a malformed optional body; `optionalJson` parses these bodies strictly.
  test('a body that is not JSON is 400', async () => {
    s = await startTestServer()
    const res = await cli().raw('POST', '/v1/pair/start', {
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(400)
  })

  test('is rate-limited: the 11th start in a minute is 429 with Retry-After', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
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
    s = await startTestServer({ writeLimit: 120, clock })
    for (let i = 0; i < 10; i++) await start()
    await s.agent.send({ body: { text: 'still fine' } })
  })
})

describe('the whole device flow', () => {
  test('start → person sees and approves with a label → the waiting CLI gets a working token', async () => {
    s = await startTestServer()
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
    s = await startTestServer()
    const p = await start()
    const waiting = poll(p.device_code, 50)
    await approve(p.user_code)
    const result = await settledWithin(waiting, 10_000)
    expect(result).not.toBe('pending')
    expect((result as PollResult).status).toBe('approved')
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('the token is handed out once: a second poll is 404', async () => {
    s = await startTestServer()
    const p = await start()
    await approve(p.user_code)
    const first = await poll(p.device_code)
    expect(first.status).toBe('approved')
    await failsWith(poll(p.device_code), 404)
    await failsWith(poll(p.device_code, 1), 404)
    expect(count(s.ctx, 'tokens', 'channel_id = ?1', first.channel?.id as string)).toBe(1)
  })

  test('an approval before the CLI polls is redeemed by its first poll', async () => {
    s = await startTestServer()
    const p = await start({ label: 'From CLI' })
    const approved = await approve(p.user_code)
    expect(approved.channel.label).toBe('From CLI')
    const result = await poll(p.device_code, 0)
    expect(result.status).toBe('approved')
    expect((await s.agentClient(result.token).channel()).channel.label).toBe('From CLI')
  })

  test("without a label from either side, the channel is 'Agent'", async () => {
    s = await startTestServer()
    const p = await start()
    expect((await approve(p.user_code)).channel.label).toBe('Agent')
  })

  test('the new token shows in the token list under the channel, without its secret', async () => {
    s = await startTestServer()
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
    s = await startTestServer()
    const p = await start()
    expect(await poll(p.device_code, 0)).toEqual({ status: 'pending' })
    expect(await poll(p.device_code)).toEqual({ status: 'pending' })
    expect(await poll(p.device_code, 0.2)).toEqual({ status: 'pending' })
    expect((await see(p.user_code)).pairing.status).toBe('pending')
  })

  test('deny: the waiting CLI hears denied, and no channel is made', async () => {
    s = await startTestServer()
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
    s = await startTestServer()
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
    s = await startTestServer({ clock })
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
    s = await startTestServer({ clock })
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
    s = await startTestServer()
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
    s = await startTestServer()
    const p = await start()
    await failsWith(poll('nope'), 404)
    await failsWith(poll(p.user_code), 404)
  })

  test('a missing, empty or non-string device_code is 400 naming device_code', async () => {
    s = await startTestServer()
    for (const json of [{}, { device_code: '' }, { device_code: 42 }, { device_code: null }]) {
      const res = await cli().raw('POST', '/v1/pair/token', { json })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('device_code')
    }
    const none = await cli().raw('POST', '/v1/pair/token')
    expect(none.status).toBe(400)
  })

  test('a wait that is not a non-negative number is 400 naming wait', async () => {
    s = await startTestServer()
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
