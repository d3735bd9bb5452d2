import { afterEach, describe, expect, test } from 'bun:test'
import type { FeedResponse, Message } from '../../src/messages/schema.ts'
import { startTestServer, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

const POLLS = 10

/** `POLLS` long-polls of the agent at `since`, each answered as its body's text. */
function holdPolls(since: number, query: string): Promise<string>[] {
  return Array.from({ length: POLLS }, () =>
    s
      .handle(
        new Request(`${s.url}/v1/messages?since=${since}&wait=30${query}`, {
          headers: { authorization: `Bearer ${s.agentToken}` },
        }),
      )
      .then((r) => r.text()),
  )
}

/** Resolves once `n` polls are parked on the server. */
async function parked(n: number) {
  while (s.ctx.waiters.size < n) await new Promise((resolve) => setImmediate(resolve))
}

describe('GET /v1/messages: one change wakes many polls', () => {
  test("the person's message wakes polls that mark it seen: one mark, the same bytes and cursor for all", async () => {
    s = await startTestServer()
    const { cursor } = await s.agent.feed()
    const polls = holdPolls(cursor, '')
    await parked(POLLS)
    const sent = (await s.person.send(s.channelId, { text: 'look' })).message
    const bodies = await Promise.all(polls)
    expect(new Set(bodies).size).toBe(1)
    const answer = JSON.parse(bodies[0] as string) as FeedResponse
    expect(answer.messages.map((m) => m.id)).toEqual([sent.id])
    expect((answer.messages[0] as Message).state).toBe('seen')
    // One mark, one change: nothing past the cursor every poll was given.
    expect(await s.agent.feed({ since: answer.cursor, peek: true })).toEqual({
      messages: [],
      cursor: answer.cursor,
      has_more: false,
    })
    expect(((await s.person.feed(s.channelId)).messages[0] as Message).state).toBe('seen')
  })

  test('polls that peek share one read of the page and answer the same bytes', async () => {
    s = await startTestServer()
    const { cursor } = await s.agent.feed()
    const messages = s.ctx.store.messages
    const feed = messages.feed.bind(messages)
    let reads = 0
    messages.feed = (...args: Parameters<typeof feed>) => {
      reads++
      return feed(...args)
    }
    const polls = holdPolls(cursor, '&peek=1')
    await parked(POLLS)
    reads = 0
    const sent = (await s.agent.send({ body: { text: 'wake' } })).message
    const bodies = await Promise.all(polls)
    expect(new Set(bodies).size).toBe(1)
    expect((JSON.parse(bodies[0] as string) as FeedResponse).messages).toEqual([sent])
    expect(reads).toBe(1)
  })
})
