import { afterEach, expect, test } from 'bun:test'
import { MAX_HELD_POLLS } from '../../src/core/holds.ts'
import { startTestServer, type TestServer, until } from '../harness.ts'

/**
 * Finding 10 of the attack pass: nothing bounded the long-polls one token held at once (each a
 * connection and a waiter for up to 55 s). The bound counts per token or browser session, across
 * the feed, asks and secrets. At the bound the holder's oldest poll is answered at once (empty,
 * as if its wait ran out) and the new one is held: never more than the bound, never a refusal
 * (a person reloading the app leaves polls behind that linger until their wait ends).
 */

let s: TestServer
afterEach(() => s?.close())

test(`an agent token holds at most ${MAX_HELD_POLLS} long-polls: a new one ends the oldest, empty`, async () => {
  s = await startTestServer()
  const { message } = await s.agent.send({
    body: { blocks: [{ type: 'confirm', id: 'ok', label: 'OK' }] },
  })
  const { cursor } = await s.agent.feed({ since: 0, peek: true })
  const settled: number[] = []
  const held: Promise<unknown>[] = []
  for (let i = 0; i < MAX_HELD_POLLS; i++) {
    // Feed and asks count against the same token.
    const poll =
      i % 2 === 0
        ? s.agent.feed({ since: cursor, wait: 30, peek: true })
        : s.agent.ask(message.id, 30)
    held.push(
      poll.then((answer) => {
        settled.push(i)
        return answer
      }),
    )
    // One at a time, so that "oldest" is well defined.
    await until(() => s.ctx.waiters.size === i + 1)
  }
  // The bound is reached: one more is held, and the oldest (a feed poll) answers empty now.
  const extra = s.agent.feed({ since: cursor, wait: 30, peek: true })
  expect(await held[0]).toEqual({ messages: [], cursor, has_more: false })
  expect(settled).toEqual([0])
  expect(s.ctx.waiters.size).toBe(MAX_HELD_POLLS)
  // Next the second oldest (an ask), answered as an unanswered ask is at the end of its wait.
  const more = s.agent.feed({ since: cursor, wait: 30, peek: true })
  const ask = (await held[1]) as { answer: unknown; message: { id: string } }
  expect([ask.message.id, ask.answer]).toEqual([message.id, null])
  expect(settled).toEqual([0, 1])
  // A read that does not wait is never counted; another token has its own bound.
  expect((await s.agent.feed({ since: 0, peek: true })).messages).toHaveLength(1)
  const other = await s.addChannel('Other')
  expect((await other.agent.feed({ since: 0, wait: 0.05 })).messages).toEqual([])
  expect(s.ctx.waiters.size).toBe(MAX_HELD_POLLS)
  // Everything still held is woken by a change, as ever.
  await s.agent.send({ body: { text: 'wake' } })
  for (const answer of await Promise.all([
    extra,
    more,
    ...held.slice(2).filter((_, i) => i % 2 === 0),
  ])) {
    expect((answer as { messages: unknown[] }).messages.length).toBeGreaterThan(0)
  }
  await s.person.answer(message.id, true)
  // Every poll answered (its hold is let go before its answer leaves), none parked any more.
  await Promise.all(held)
  await until(() => s.ctx.waiters.size === 0)
  const token = s.ctx.db
    .query("SELECT id FROM tokens WHERE kind = 'agent' AND channel_id = ?1")
    .get(s.channelId) as { id: string }
  expect(s.ctx.holds.count(`token:${token.id}`)).toBe(0)
})

test(`a person holds at most ${MAX_HELD_POLLS} per token and ${MAX_HELD_POLLS} per browser session`, async () => {
  s = await startTestServer()
  const app = await s.sessionClient()
  const polls: Promise<unknown>[] = []
  const settled: number[] = []
  for (let i = 0; i < MAX_HELD_POLLS * 2; i++) {
    const client = i < MAX_HELD_POLLS ? s.person : app
    const path = i % 2 === 0 ? '/v1/app/feed' : `/v1/app/channels/${s.channelId}/messages`
    const poll = client.call('GET', path, { query: { since: 1_000_000, wait: 30 } })
    polls.push(poll.then(() => settled.push(i)))
    await until(() => s.ctx.waiters.size === i + 1)
  }
  // A reload of the app (a new poll on the session) ends the session's oldest, not the token's.
  const reload = app.call('GET', '/v1/app/feed', { query: { since: 1_000_000, wait: 30 } })
  await until(() => settled.length === 1)
  expect(settled).toEqual([MAX_HELD_POLLS])
  expect(s.ctx.waiters.size).toBe(MAX_HELD_POLLS * 2)
  s.close()
  await Promise.allSettled([...polls, reload])
})

test('a poll that ends by waking releases its place', async () => {
  s = await startTestServer()
  let since = 0
  for (let round = 0; round < 3; round++) {
    const polls = Array.from({ length: MAX_HELD_POLLS }, () => s.agent.feed({ since, wait: 30 }))
    await until(() => s.ctx.waiters.size === MAX_HELD_POLLS)
    await s.agent.send({ body: { text: `wake ${round}` } })
    for (const answer of await Promise.all(polls)) expect(answer.messages.length).toBeGreaterThan(0)
    since = (await s.agent.feed({ since, peek: true })).cursor
    expect(s.ctx.waiters.size).toBe(0)
  }
})

/**
 * The bound is a setting (`--max-held-polls`, HARK_MAX_HELD_POLLS): the shared fan-out yardstick
 * holds thousands of polls on one token, which the default bound would answer early, empty
 * (its wake figures then measured the bound, not the wake-up).
 */
test('--max-held-polls 0: one token holds more than the default bound, none ended early, one send wakes all', async () => {
  s = await startTestServer({ maxHeldPolls: 0 })
  const { cursor } = await s.agent.feed({ since: 0, peek: true })
  const n = MAX_HELD_POLLS * 3
  let settled = 0
  const polls = Array.from({ length: n }, () =>
    s.agent.feed({ since: cursor, wait: 30, peek: true }).then((answer) => {
      settled++
      return answer
    }),
  )
  await until(() => s.ctx.waiters.size === n)
  expect(settled).toBe(0)
  const { message } = await s.agent.send({ body: { text: 'wake' } })
  for (const answer of await Promise.all(polls)) {
    expect(answer.messages.map((m) => m.id)).toEqual([message.id])
  }
})

test('--max-held-polls 3: the fourth ends the oldest, and the log says why', async () => {
  const lines: string[] = []
  const log = {
    info: () => {},
    warn: (line: string) => lines.push(line),
    error: () => {},
  }
  s = await startTestServer({ maxHeldPolls: 3, log })
  const { cursor } = await s.agent.feed({ since: 0, peek: true })
  const polls = []
  for (let i = 0; i < 3; i++) {
    polls.push(s.agent.feed({ since: cursor, wait: 30, peek: true }))
    await until(() => s.ctx.waiters.size === i + 1)
  }
  expect(lines).toEqual([])
  const fourth = s.agent.feed({ since: cursor, wait: 30, peek: true })
  expect(await polls[0]).toEqual({ messages: [], cursor, has_more: false })
  expect(s.ctx.waiters.size).toBe(3)
  expect(lines).toHaveLength(1)
  expect(lines[0]).toContain('holds 3 long-polls (--max-held-polls)')
  await s.agent.send({ body: { text: 'wake' } })
  for (const answer of await Promise.all([...polls.slice(1), fourth])) {
    expect(answer.messages).toHaveLength(1)
  }
})
