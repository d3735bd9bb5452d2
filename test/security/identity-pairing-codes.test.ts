import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { PAIRING_LIMITS } from '../../src/access/pairing-limits.ts'
import type { PairingStart } from '../../src/people/enrol/pairing.ts'
import { addUser } from '../../src/people/service.ts'
import { type Reply, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count } from '../people/util.ts'

/**
 * Attack pass, finding 6: a logged-in person could try pairing codes without limit, and a hit
 * approves someone else's `hark init` into the guesser's account. Now misses (unknown, expired
 * or answered codes) are limited per person and per client address; hits are never counted.
 */

let s: TestServer
let clock: TestClock
beforeEach(async () => {
  clock = new TestClock()
  // Client addresses from X-Forwarded-For, as behind a reverse proxy.
  s = await startTestServer({ trustProxy: true, clock })
})
afterEach(() => s.close())

const HOME = '203.0.113.5'

/** A pairing started by a CLI somewhere (its own address, so start limits never interfere). */
let starts = 0
async function startPairing(): Promise<PairingStart> {
  const reply = await s.request('POST', '/v1/pair/start', {
    origin: null,
    json: {},
    headers: { 'x-forwarded-for': `198.51.100.${++starts % 250}` },
  })
  expect(reply.status).toBe(200)
  return reply.body as PairingStart
}

/** A code of the right shape that no pairing has (consonants only). */
const guess = (i: number) => {
  const letters = 'BCDFGHJKLMNPQRSTVWXZ'
  let n = i
  let code = ''
  for (let k = 0; k < 8; k++) {
    code += letters[n % 20]
    n = Math.floor(n / 20)
  }
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

async function person(email: string) {
  if (!(await s.ctx.store.users.byEmail(email))) await addUser(s.ctx, { email })
  return (await s.session(email)).cookie
}

const look = (cookie: string, code: string, ip = HOME): Promise<Reply> =>
  s.request('GET', `/v1/app/pairings/${encodeURIComponent(code)}`, {
    cookie,
    headers: { 'x-forwarded-for': ip },
  })
const approve = (cookie: string, code: string, ip = HOME): Promise<Reply> =>
  s.request('POST', `/v1/app/pairings/${encodeURIComponent(code)}/approve`, {
    cookie,
    json: {},
    headers: { 'x-forwarded-for': ip },
  })
const deny = (cookie: string, code: string, ip = HOME): Promise<Reply> =>
  s.request('POST', `/v1/app/pairings/${encodeURIComponent(code)}/deny`, {
    cookie,
    headers: { 'x-forwarded-for': ip },
  })

describe('guessing pairing codes', () => {
  test('a guesser gets 10 misses, then 429 for every code, a real one too: nothing is approved', async () => {
    const victim = await startPairing()
    const mallory = await person('mallory@example.com')
    const statuses: number[] = []
    for (let i = 0; i < 300; i++) statuses.push((await look(mallory, guess(i))).status)
    expect(statuses.slice(0, PAIRING_LIMITS.missesPerPerson).every((x) => x === 404)).toBe(true)
    expect(statuses.slice(PAIRING_LIMITS.missesPerPerson).every((x) => x === 429)).toBe(true)

    // Even the right code now gets 429: answering hits would keep the guessing going.
    const hit = await approve(mallory, victim.user_code)
    expect(hit.status).toBe(429)
    expect(hit.body).toEqual({ error: 'too many unknown pairing codes tried; retry in 60 s' })
    expect(hit.headers.get('retry-after')).toBe('60')
    expect((await deny(mallory, victim.user_code)).status).toBe(429)
    expect((await s.ctx.store.pairings.byUserCode(victim.user_code))?.status).toBe('pending')
    expect(
      count(s.ctx, 'channels', 'user_id = ?', (await s.session('mallory@example.com')).user.id),
    ).toBe(0)

    // The limit refills one miss a minute.
    clock.advance(60_000)
    expect((await look(mallory, guess(1000))).status).toBe(404)
    expect((await look(mallory, guess(1001))).status).toBe(429)
  })

  test('misses by approving or denying count the same', async () => {
    const mallory = await person('mallory@example.com')
    for (let i = 0; i < PAIRING_LIMITS.missesPerPerson; i++) {
      const act = [look, approve, deny][i % 3]!
      expect((await act(mallory, guess(i))).status).toBe(404)
    }
    expect((await approve(mallory, guess(99))).status).toBe(429)
  })

  test('a person looking up and approving their own code is never held up', async () => {
    const me = (await s.session()).cookie
    const mine = await startPairing()
    for (let i = 0; i < 100; i++) expect((await look(me, mine.user_code)).status).toBe(200)
    // A few typos first, then the right code.
    for (let i = 0; i < 5; i++) expect((await look(me, guess(i))).status).toBe(404)
    expect((await look(me, mine.user_code.toLowerCase())).status).toBe(200)
    expect((await approve(me, mine.user_code)).status).toBe(200)
  })

  test("a guesser's lock-out is theirs: another person elsewhere looks up and approves their code", async () => {
    const mallory = await person('mallory@example.com')
    for (let i = 0; i <= PAIRING_LIMITS.missesPerPerson; i++) await look(mallory, guess(i))
    expect((await look(mallory, guess(50))).status).toBe(429)
    const me = (await s.session()).cookie
    const mine = await startPairing()
    expect((await look(me, mine.user_code, '192.0.2.1')).status).toBe(200)
    expect((await approve(me, mine.user_code, '192.0.2.1')).status).toBe(200)
  })

  test('many accounts behind one address share its 20 misses', async () => {
    const accounts: string[] = []
    for (const i of [0, 1, 2]) accounts.push(await person(`m${i}@example.com`))
    let n = 0
    for (const cookie of accounts.slice(0, 2)) {
      for (let i = 0; i < PAIRING_LIMITS.missesPerPerson; i++) {
        expect((await look(cookie, guess(n++))).status).toBe(404)
      }
    }
    const third = await look(accounts[2]!, guess(n++))
    expect(third.status).toBe(429)
    expect(third.body).toEqual({
      error: 'too many unknown pairing codes tried from your network address; retry in 30 s',
    })
    expect(third.headers.get('retry-after')).toBe('30')
    // The same account from another address still has its own misses.
    expect((await look(accounts[2]!, guess(n++), '192.0.2.9')).status).toBe(404)
  })

  test('an expired or already answered code is a miss too', async () => {
    const me = (await s.session()).cookie
    const answered = await startPairing()
    expect((await deny(me, answered.user_code)).status).toBe(200)
    const expiring = await startPairing()
    clock.advance(10 * 60_000)
    for (let i = 0; i < PAIRING_LIMITS.missesPerPerson / 2; i++) {
      expect((await look(me, answered.user_code)).status).toBe(404)
      expect((await look(me, expiring.user_code)).status).toBe(404)
    }
    expect((await look(me, answered.user_code)).status).toBe(429)
  })
})
