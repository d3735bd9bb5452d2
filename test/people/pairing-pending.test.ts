import { afterEach, describe, expect, test } from 'bun:test'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { pairingCalls } from './calls.ts'
import { count, fieldOf } from './util.ts'

/**
 * Where a pairing comes from (issue 28): `hark init` sends its host name, the server keeps the
 * address it saw and the time, and the owner sees the pending pairings live
 * (`GET /v1/app/pairings`, a long-poll on the list's `version`), each with that origin.
 */
let s: TestServer
afterEach(() => s?.close())

const { cli, start, see, approve, deny } = pairingCalls(() => s)

interface Pending {
  pairings: {
    user_code: string
    label: string | null
    host: string | null
    address: string | null
    created_at: number
    expires_at: number
  }[]
  version: string
}

const pending = (query: { wait?: number; version?: string } = {}, signal?: AbortSignal) =>
  s.person.call<Pending>('GET', '/v1/app/pairings', { query, signal })

describe('POST /v1/pair/start: where it comes from', () => {
  test('keeps the host name sent, the client address and the time; the code shows them', async () => {
    const clock = new TestClock()
    s = await startTestServer({ listen: true, clock })
    const p = await start({ label: 'repo', host: 'ada-laptop.local' })
    const { pairing } = await see(p.user_code)
    expect(pairing).toMatchObject({
      host: 'ada-laptop.local',
      address: '127.0.0.1',
      created_at: clock.now(),
    })
    // A client that sends no host (an older `hark init`): the address and the time still.
    const bare = await see((await start()).user_code)
    expect(bare.pairing).toMatchObject({ host: null, address: '127.0.0.1' })
  })

  test('an invalid host is 400 naming host, and nothing is stored', async () => {
    s = await startTestServer()
    const bad = ['', '  ', 'x'.repeat(254), 42, null, ['a'], 'evil\u202elocal', 'a\nb', 'tab\there']
    for (const host of bad) {
      const res = await cli().raw('POST', '/v1/pair/start', { json: { host } })
      expect({ host, status: res.status }).toEqual({ host, status: 400 })
      expect(await fieldOf(res)).toBe('host')
    }
    expect(count(s.ctx, 'pairings')).toBe(0)
  })
})

describe('GET /v1/app/pairings', () => {
  test('lists the pending pairings, oldest first, with their origin; answered ones leave', async () => {
    const clock = new TestClock()
    s = await startTestServer({ listen: true, clock })
    expect((await pending()).pairings).toEqual([])
    const a = await start({ host: 'build-box', label: 'CI' })
    clock.advance(1000)
    const b = await start({ host: 'ada-laptop' })
    const list = await pending()
    expect(list.pairings.map((p) => [p.user_code, p.host, p.label, p.address])).toEqual([
      [a.user_code, 'build-box', 'CI', '127.0.0.1'],
      [b.user_code, 'ada-laptop', null, '127.0.0.1'],
    ])
    await approve(a.user_code, { label: 'CI' })
    await deny(b.user_code)
    expect((await pending()).pairings).toEqual([])
  })

  test('an expired pairing is not listed', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    await start({ host: 'old' })
    clock.advance(10 * 60_000)
    expect((await pending()).pairings).toEqual([])
  })

  test('held on its version, it answers when a pairing starts, not at its timeout', async () => {
    s = await startTestServer()
    const { version } = await pending()
    const held = pending({ wait: 30, version })
    await Bun.sleep(50) // let the poll park; a start before it parks answers it just the same
    const p = await start({ host: 'ada-laptop' })
    const woke = await held
    expect(woke.pairings.map((x) => x.user_code)).toEqual([p.user_code])
    expect(woke.version).not.toBe(version)
    // And when it is answered.
    const again = pending({ wait: 30, version: woke.version })
    await deny(p.user_code)
    expect((await again).pairings).toEqual([])
  })

  test('a version that is not the current list answers at once', async () => {
    s = await startTestServer()
    await start({ host: 'x' })
    const list = await pending({ wait: 30, version: 'stale' })
    expect(list.pairings).toHaveLength(1)
  })

  test('only the owner sees pending pairings: anyone else is 403', async () => {
    s = await startTestServer()
    await start({ host: 'x' })
    const member = await s.addPerson('member@example.com')
    await failsWith(member.call('GET', '/v1/app/pairings'), 403)
  })

  test('a bad wait is 400 naming wait', async () => {
    s = await startTestServer()
    const res = await s.person.raw('GET', '/v1/app/pairings', { query: { wait: 'soon' } })
    expect(res.status).toBe(400)
    expect(await fieldOf(res)).toBe('wait')
  })
})
