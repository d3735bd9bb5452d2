import { beforeAll, describe, expect, test } from 'bun:test'
import type { SQL } from 'bun'
import type { Served } from '../binary/process.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { call, useTwoInstances, within } from './two-instances.ts'

/**
 * Two `dist/hark serve` instances on one Postgres (test/pg/two-instances.ts): a waiter on one is
 * woken by a write through the other, a lock held elsewhere holds up only its own request, and a
 * question is settled, or expires, once.
 */
const skip = skipWithoutPostgres()

let pg: SQL
let a: Served
let b: Served
let agent: string
let person: string
let channelId: string

describe.skipIf(skip)('two hark serve instances on one Postgres', () => {
  const instances = useTwoInstances()
  beforeAll(() => {
    ;({ a, b, pg, agent, person, channelId } = instances())
  })

  test("an agent's long-poll on A is answered by the person's message sent through B", async () => {
    const start = await call(a, 'GET', '/v1/messages?since=0&sender=human', { token: agent })
    const since = start.body.cursor as number
    const poll = call(a, 'GET', `/v1/messages?since=${since}&wait=25&sender=human`, {
      token: agent,
    })
    // Held: nothing new yet.
    expect(await within(poll, 300)).toBe('pending')
    const sent = await call(b, 'POST', `/v1/app/channels/${channelId}/messages`, {
      token: person,
      json: { body: { text: 'from B' } },
    })
    expect(sent.status).toBe(200)
    const answered = await within(poll, 5_000)
    expect(answered).not.toBe('pending')
    if (answered === 'pending') return
    expect(answered.status).toBe(200)
    expect(answered.body.messages.map((m: { body: { text: string } }) => m.body.text)).toEqual([
      'from B',
    ])
  })

  test("/metrics counts each instance's wake-ups through Postgres, and no SQLite file", async () => {
    const text = await (await fetch(`${a.url}/metrics`)).text()
    const received = /hark_wake_notifications_total\{direction="received"\} (\d+)/.exec(text)
    expect(Number(received?.[1])).toBeGreaterThan(0)
    expect(text).toContain('hark_wake_all_total 0')
    expect(text).not.toContain('hark_database_bytes')
  })

  test("an answer on A does not wait for another request's write stuck on a lock", async () => {
    // Another instance (here: a test connection) holds the person's row: A's send waits on it.
    const lock = await pg.reserve()
    try {
      await lock`BEGIN`
      await lock`SELECT 1 FROM users WHERE email = 'owner@example.com' FOR UPDATE`
      const stuck = call(a, 'POST', '/v1/messages', {
        token: agent,
        json: { body: { text: 'waits for the lock' } },
      })
      expect(await within(stuck, 300)).toBe('pending')
      // Reads and other people's requests on A are answered meanwhile, not held behind it.
      const info = await within(call(a, 'GET', '/v1/info'), 3_000)
      expect(info).not.toBe('pending')
      const feed = await within(
        call(a, 'GET', '/v1/messages?since=0&peek=1', { token: agent }),
        3_000,
      )
      expect(feed).not.toBe('pending')
      if (feed !== 'pending') expect(feed.status).toBe(200)
      await lock`COMMIT`
      expect((await stuck).status).toBe(200)
    } finally {
      lock.release()
    }
  })

  test('a question asked on A and answered on B wakes its waiter on A', async () => {
    const asked = await call(a, 'POST', '/v1/messages', {
      token: agent,
      json: { body: { title: 'Deploy?', blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] } },
    })
    expect(asked.status).toBe(200)
    const id = asked.body.message.id as string
    const waiting = call(a, 'GET', `/v1/asks/${id}?wait=25`, { token: agent })
    expect(await within(waiting, 300)).toBe('pending')
    const answer = await call(b, 'POST', `/v1/app/messages/${id}/answer`, {
      token: person,
      json: { answer: true },
    })
    expect(answer.status).toBe(200)
    const got = await within(waiting, 5_000)
    expect(got).not.toBe('pending')
    if (got === 'pending') return
    expect(got.body.message.ask.status).toBe('answered')
    expect(got.body.answer).toBe(true)
    // A second answer, through either instance, is refused: the question is settled once.
    const again = await call(a, 'POST', `/v1/app/messages/${id}/answer`, {
      token: person,
      json: { answer: false },
    })
    expect(again.status).toBe(409)
  })

  test('a question expires once, though both instances watch it', async () => {
    const asked = await call(b, 'POST', '/v1/messages', {
      token: agent,
      json: {
        body: { title: 'Soon gone', blocks: [{ type: 'confirm', id: 'ok', label: 'OK' }] },
        expires_in: 1,
      },
    })
    expect(asked.status).toBe(200)
    const id = asked.body.message.id as string
    const [before] = await pg`SELECT change_seq FROM users WHERE email = 'owner@example.com'`
    const waiting = await call(a, 'GET', `/v1/asks/${id}?wait=20`, { token: agent })
    expect(waiting.body.message.ask.status).toBe('expired')
    // B's timer expires it, and A's long-poll expires a due question as it reads it: both try.
    // A second expiry would have taken another number of the person's change sequence.
    await Bun.sleep(1_500)
    const [after] = await pg`SELECT change_seq FROM users WHERE email = 'owner@example.com'`
    expect(Number(after.change_seq) - Number(before.change_seq)).toBe(1)
    const [row] = await pg`SELECT ask_status FROM messages WHERE id = ${id}`
    expect(row.ask_status).toBe('expired')
  })
})
