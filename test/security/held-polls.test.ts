import { afterEach, expect, test } from 'bun:test'
import { MAX_HELD_POLLS } from '../../src/server/holds.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'

/**
 * Finding 10 of the attack pass: nothing capped the long-polls one token held at once (each a
 * connection and a waiter for up to 55 s). The cap counts per token or session, across the feed,
 * asks and secrets; a poll that does not wait is never counted.
 */

let s: TestServer
afterEach(() => s?.close())

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await Bun.sleep(10)
  expect(condition()).toBe(true)
}

test(`an agent token holds at most ${MAX_HELD_POLLS} long-polls; the next is 429 until one ends`, async () => {
  s = startTestServer()
  const { message } = await s.agent.send({
    body: { blocks: [{ type: 'confirm', id: 'ok', label: 'OK' }] },
  })
  const abort = new AbortController()
  const held: Promise<unknown>[] = []
  for (let i = 0; i < MAX_HELD_POLLS; i++) {
    // Feed, asks and secrets all count against the same token.
    const poll =
      i % 2 === 0
        ? s.agent.feed({ since: 1_000_000, wait: 30 }, abort.signal)
        : s.agent.call('GET', `/v1/asks/${message.id}`, {
            query: { wait: 30 },
            signal: abort.signal,
          })
    held.push(poll.catch((e: unknown) => e))
  }
  await until(() => s.ctx.waiters.size === MAX_HELD_POLLS)
  const refused = await failsWith(s.agent.feed({ since: 0, wait: 30 }), 429)
  expect(refused.error).toBe(
    `too many long-polls held at once for this token or session (at most ${MAX_HELD_POLLS}); let one finish or cancel it`,
  )
  expect(refused.headers.get('retry-after')).toBe('5')
  await failsWith(s.agent.call('GET', `/v1/asks/${message.id}`, { query: { wait: 5 } }), 429)
  // A read that does not wait is never refused.
  expect((await s.agent.feed({ since: 0 })).messages).toHaveLength(1)
  // Another channel's token has its own count.
  const other = s.addChannel('Other')
  const otherPoll = other.agent.feed({ since: 0, wait: 1 })
  expect((await otherPoll).messages).toEqual([])
  abort.abort()
  await Promise.all(held)
  await until(() => s.ctx.waiters.size === 0)
  expect((await s.agent.feed({ since: 1_000_000, wait: 0.1 })).messages).toEqual([])
})

test(`a person token holds at most ${MAX_HELD_POLLS} long-polls of the person feed and channel feeds`, async () => {
  s = startTestServer()
  const abort = new AbortController()
  const held: Promise<unknown>[] = []
  for (let i = 0; i < MAX_HELD_POLLS; i++) {
    const path = i % 2 === 0 ? '/v1/app/feed' : `/v1/app/channels/${s.channelId}/messages`
    held.push(
      s.person
        .call('GET', path, { query: { since: 1_000_000, wait: 30 }, signal: abort.signal })
        .catch((e: unknown) => e),
    )
  }
  await until(() => s.ctx.waiters.size === MAX_HELD_POLLS)
  await failsWith(s.person.call('GET', '/v1/app/feed', { query: { since: 0, wait: 30 } }), 429)
  // The person's browser session is another holder.
  const browser = s.sessionClient()
  const fromApp = await browser.call<{ messages: unknown[] }>('GET', '/v1/app/feed', {
    query: { since: 1_000_000, wait: 0.1 },
  })
  expect(fromApp.messages).toEqual([])
  abort.abort()
  await Promise.all(held)
  await until(() => s.ctx.waiters.size === 0)
})

test('a poll that ends by waking releases its place', async () => {
  s = startTestServer()
  let since = 0
  for (let round = 0; round < 3; round++) {
    const polls = Array.from({ length: MAX_HELD_POLLS }, () => s.agent.feed({ since, wait: 30 }))
    await until(() => s.ctx.waiters.size === MAX_HELD_POLLS)
    await s.agent.send({ body: { text: `wake ${round}` } })
    for (const answer of await Promise.all(polls)) expect(answer.messages.length).toBeGreaterThan(0)
    since = (await s.agent.feed({ since, peek: true })).cursor
    // All places are free again: a new full set of polls is taken.
    const again = Array.from({ length: MAX_HELD_POLLS }, () => s.agent.feed({ since, wait: 0.05 }))
    for (const answer of await Promise.all(again)) expect(answer.messages).toEqual([])
  }
})
