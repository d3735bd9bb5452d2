import { afterEach, describe, expect, test } from 'bun:test'
import { LIMITS } from '../../src/messages/limits.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'
import { type PollResult, pairingCalls } from './calls.ts'
import { count, fieldOf } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const { cli, start, poll, see, approve, deny } = pairingCalls(() => s)

describe('the person side of pairing', () => {
  test('an unknown user code is 404 on GET, approve and deny', async () => {
    s = await startTestServer()
    await failsWith(see('BCDF-GHJK'), 404)
    await failsWith(approve('BCDF-GHJK'), 404)
    await failsWith(deny('not-a-code'), 404)
  })

  test('an invalid approval label is 400 naming label, and the pairing stays pending', async () => {
    s = await startTestServer()
    const p = await start()
    for (const label of ['', '  ', 'x'.repeat(LIMITS.labelChars + 1), 7]) {
      const res = await (await s.sessionClient()).raw(
        'POST',
        `/v1/app/pairings/${p.user_code}/approve`,
        {
          json: { label },
        },
      )
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('label')
    }
    expect((await see(p.user_code)).pairing.status).toBe('pending')
    expect((await s.person.channels()).channels).toHaveLength(1)
  })

  test('a person token cannot approve (403): no channel, no token, the pairing stays pending', async () => {
    s = await startTestServer()
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
    s = await startTestServer()
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
    s = await startTestServer()
    const p = await start()
    const { cookie } = await s.session()
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
    s = await startTestServer()
    const bob = await s.addPerson('bob@example.com')
    const p = await start()
    const approved = await (await s.sessionClient('bob@example.com')).call<{
      channel: { id: string }
    }>('POST', `/v1/app/pairings/${p.user_code}/approve`)
    const result = await poll(p.device_code)
    expect((await bob.channels()).channels.map((c) => c.id)).toEqual([approved.channel.id])
    expect((await s.person.channels()).channels.map((c) => c.id)).toEqual([s.channelId])
    expect(result.channel?.id).toBe(approved.channel.id)
  })

  test('if the channel is deleted between approval and the poll, the CLI hears 404 or denied', async () => {
    s = await startTestServer()
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
