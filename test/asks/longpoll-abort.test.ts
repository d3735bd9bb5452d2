import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, until } from '../harness.ts'
import { cursorNow, parked, question, text, timed } from './fixtures.ts'

let s: TestServer
beforeEach(async () => {
  s = await startTestServer()
})
afterEach(() => s.close())

describe('aborting and closing', () => {
  test('an aborted ask poll leaves no waiter behind', async () => {
    const message = await question(s, [text])
    const controller = new AbortController()
    const poll = s.agent.ask(message.id, 10, controller.signal).catch(() => undefined)
    await parked(s, 1)
    const { ms } = await timed(
      (async () => {
        controller.abort()
        await poll
      })(),
    )
    expect(ms).toBeLessThan(2000)
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('aborted feed polls, agent and person, leave no waiter behind', async () => {
    const cursor = await cursorNow(s)
    const controllers = Array.from({ length: 20 }, () => new AbortController())
    const polls = controllers.map((c, i) =>
      (i % 2 === 0
        ? s.agent.feed({ since: cursor, wait: 10 }, c.signal)
        : s.person.feed(s.channelId, { since: cursor, wait: 10 }, c.signal)
      ).catch(() => undefined),
    )
    await parked(s, 20)
    for (const c of controllers.slice(0, 10)) c.abort()
    await until(() => s.ctx.waiters.size === 10)
    for (const c of controllers.slice(10)) c.abort()
    await Promise.all(polls)
    expect(s.ctx.waiters.size).toBe(0)
    // The channel still wakes later readers.
    const next = s.agent.feed({ since: cursor, wait: 10 })
    await parked(s, 1)
    await s.agent.send({ body: { text: 'after the aborts' } })
    expect((await next).messages).toHaveLength(1)
  })

  test('an already aborted request does not park', async () => {
    const message = await question(s, [text])
    const controller = new AbortController()
    controller.abort()
    await s.agent.ask(message.id, 10, controller.signal).catch(() => undefined)
    await s.agent
      .feed({ since: await cursorNow(s), wait: 10 }, controller.signal)
      .catch(() => undefined)
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('closing the server settles every held poll', async () => {
    const message = await question(s, [text])
    const cursor = await cursorNow(s)
    const ask = s.agent.ask(message.id, 30)
    const feed = s.agent.feed({ since: cursor, wait: 30 })
    const personFeed = s.person.feed(s.channelId, { since: cursor, wait: 30 })
    await parked(s, 3)
    const { value, ms } = await timed(
      (async () => {
        s.close()
        return Promise.all([ask, feed, personFeed])
      })(),
    )
    expect(ms).toBeLessThan(2000)
    const [a, f, p] = value
    expect(a).toEqual({ message, answer: null })
    expect(f).toEqual({ messages: [], cursor, has_more: false })
    expect(p).toEqual({ messages: [], cursor, has_more: false })
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('after waiters.close() a new wait answers at once', async () => {
    const message = await question(s, [text])
    s.ctx.waiters.close()
    const { value, ms } = await timed(s.agent.ask(message.id, 30))
    expect(ms).toBeLessThan(2000)
    expect(value).toEqual({ message, answer: null })
    const feed = await timed(s.agent.feed({ since: await cursorNow(s), wait: 30 }))
    expect(feed.ms).toBeLessThan(2000)
    expect(feed.value.messages).toEqual([])
  })
})
