import { afterEach, describe, expect, test } from 'bun:test'
import { startTestServer, TestClock, type TestServer } from '../harness.ts'
import { rejects } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

describe('write rate limit', () => {
  test('the 4th write of 3 allowed → 429 with a numeric Retry-After; nothing written', async () => {
    s = await startTestServer({ writeLimit: 3 })
    for (let i = 0; i < 3; i++) await s.agent.send({ body: { text: `m${i}` } })
    const e = await rejects(s, () => s.agent.send({ body: { text: 'one too many' } }), 429)
    const retryAfter = e.headers.get('retry-after')
    expect(retryAfter).toMatch(/^\d+$/)
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1)
    // 3 per minute refill one write every 20 s.
    expect(Number(retryAfter)).toBeLessThanOrEqual(20)
    expect((await s.agent.feed({ peek: true })).messages).toHaveLength(3)
  })

  test('every kind of message write counts and is limited', async () => {
    s = await startTestServer({ writeLimit: 3 })
    const m = (await s.agent.send({ body: { text: 'a' } })).message
    const h = (await s.person.send(s.channelId, { text: 'from the person' })).message
    await s.agent.edit(m.id, { text: 'b' })
    await s.agent.ack(h.id, 'seen')
    await rejects(s, () => s.agent.edit(m.id, { text: 'c' }), 429)
    await rejects(s, () => s.agent.replace(m.id, { text: 'c' }), 429)
    await rejects(s, () => s.agent.remove(m.id), 429)
    await rejects(s, () => s.agent.ack(h.id, 'done'), 429)
  })

  test('a write whose body is not JSON counts too, and is 429 once over the limit', async () => {
    s = await startTestServer({ writeLimit: 2 })
    const broken = () =>
      s.agent.raw('POST', '/v1/messages', {
        body: '{not json',
        headers: { 'content-type': 'application/json' },
      })
    expect((await broken()).status).toBe(400)
    expect((await broken()).status).toBe(400)
    const third = await broken()
    expect(third.status).toBe(429)
    expect(third.headers.get('retry-after')).toMatch(/^\d+$/)
    await rejects(s, () => s.agent.send({ body: { text: 'valid, but over the limit' } }), 429)
  })

  test('reads are not limited', async () => {
    s = await startTestServer({ writeLimit: 3 })
    for (let i = 0; i < 3; i++) await s.agent.send({ body: { text: `m${i}` } })
    await rejects(s, () => s.agent.send({ body: { text: 'x' } }), 429)
    for (let i = 0; i < 20; i++) {
      const { messages } = await s.agent.feed({ peek: true })
      expect(messages).toHaveLength(3)
    }
    expect((await s.agent.asks()).asks).toEqual([])
  })

  test('the limit is per channel', async () => {
    s = await startTestServer({ writeLimit: 3 })
    const other = await s.addChannel()
    for (let i = 0; i < 3; i++) await s.agent.send({ body: { text: `m${i}` } })
    await rejects(s, () => s.agent.send({ body: { text: 'x' } }), 429)
    for (let i = 0; i < 3; i++) await other.agent.send({ body: { text: `o${i}` } })
  })

  test('the bucket refills with time: one write per 20 s at 3 per minute', async () => {
    const clock = new TestClock()
    s = await startTestServer({ writeLimit: 3, clock })
    for (let i = 0; i < 3; i++) await s.agent.send({ body: { text: `m${i}` } })
    const e = await rejects(s, () => s.agent.send({ body: { text: 'x' } }), 429)
    expect(e.headers.get('retry-after')).toBe('20')
    clock.advance(19_000)
    await rejects(s, () => s.agent.send({ body: { text: 'x' } }), 429)
    clock.advance(1_000)
    await s.agent.send({ body: { text: 'after the wait' } })
    await rejects(s, () => s.agent.send({ body: { text: 'x' } }), 429)
  })

  test("a stranger is 401, not 429, and uses nobody's budget", async () => {
    s = await startTestServer({ writeLimit: 3 })
    for (let i = 0; i < 5; i++) {
      await rejects(
        s,
        () => s.raw().call('POST', '/v1/messages', { json: { body: { text: 'x' } } }),
        401,
      )
    }
    for (let i = 0; i < 3; i++) await s.agent.send({ body: { text: `m${i}` } })
  })

  test('writeLimit 0 turns the limit off', async () => {
    s = await startTestServer({ writeLimit: 0 })
    for (let i = 0; i < 150; i++) await s.agent.send({ body: { text: `m${i}` } })
    expect((await s.agent.feed({ peek: true })).messages).toHaveLength(150)
  })
})
