import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ChannelSummary } from '../../src/messages/channel-list/schema.ts'
import { LIMITS } from '../../src/messages/limits.ts'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { channelCalls } from './calls.ts'
import { count, fieldOf, settledWithin } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']

const { summary, say } = channelCalls(() => s)
const rename = (id: string, label: unknown, person: Person = s.person) =>
  person.call<{ channel: ChannelSummary }>('PATCH', `/v1/app/channels/${id}`, { json: { label } })
const remove = (id: string, person: Person = s.person) =>
  person.call<{ ok: true }>('DELETE', `/v1/app/channels/${id}`)
/** Resolves once `n` long-polls are parked (they park after an await or two). */
async function parked(n: number): Promise<void> {
  for (let i = 0; i < 200 && s.ctx.waiters.size < n; i++) await Bun.sleep(5)
  expect(s.ctx.waiters.size).toBe(n)
}

describe('GET /v1/app/channels', () => {
  test('lists my channels only, oldest first, each with unread and the last message', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    clock.advance(1) // creation times are in ms: a tie would order by id
    const other = await s.addChannel('Second')
    await s.addChannel('Bob agent', 'bob@example.com')
    const { channels } = await s.person.channels()
    expect(channels.map((c) => [c.id, c.label])).toEqual([
      [s.channelId, 'Test agent'],
      [other.channelId, 'Second'],
    ])
    expect(channels[0]).toMatchObject({ unread: 0, last_message: null, open_asks: 0, pins: 0 })
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/channels'), 401)
    await failsWith(s.personClient((await s.addChannel()).token).channels(), 403)
  })
})

describe('GET /v1/app/channels/:id', () => {
  test('answers the same summary the list shows', async () => {
    s = await startTestServer()
    await say('hello')
    const { channel } = await s.person.call<{ channel: ChannelSummary }>(
      'GET',
      `/v1/app/channels/${s.channelId}`,
    )
    expect(channel).toEqual(await summary())
    expect(channel.unread).toBe(1)
  })

  test("another person's channel or an unknown id is 404", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(s.person.call('GET', `/v1/app/channels/${bobs.channelId}`), 404)
    await failsWith(s.person.call('GET', '/v1/app/channels/ch_nope'), 404)
  })
})

describe('PATCH /v1/app/channels/:id', () => {
  test('renames the channel: the agent sees its new label', async () => {
    s = await startTestServer()
    const before = await summary()
    const { channel } = await rename(s.channelId, '  Deploy bot  ')
    expect(channel.id).toBe(s.channelId)
    expect(channel.label).toBe('Deploy bot')
    expect(channel.updated_at).toBeGreaterThanOrEqual(before.updated_at)
    expect(channel).toMatchObject({ unread: 0, last_message: null })
    expect((await s.agent.channel()).channel.label).toBe('Deploy bot')
    expect((await summary()).label).toBe('Deploy bot')
  })

  test(`accepts ${LIMITS.labelChars} characters; an invalid label is 400 naming label`, async () => {
    s = await startTestServer()
    const longest = 'x'.repeat(LIMITS.labelChars)
    expect((await rename(s.channelId, longest)).channel.label).toBe(longest)
    for (const label of ['', '   ', 'x'.repeat(LIMITS.labelChars + 1), 5, null, ['a']]) {
      const res = await s.person.raw('PATCH', `/v1/app/channels/${s.channelId}`, {
        json: { label },
      })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('label')
    }
    const missing = await s.person.raw('PATCH', `/v1/app/channels/${s.channelId}`, { json: {} })
    expect(missing.status).toBe(400)
    expect(await fieldOf(missing)).toBe('label')
    expect((await s.agent.channel()).channel.label).toBe(longest)
  })

  test("another person's channel, or an unknown one, is 404 and unchanged", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(rename(bobs.channelId, 'Mine now'), 404)
    await failsWith(rename('ch_nope', 'x'), 404)
    expect((await bobs.agent.channel()).channel.label).toBe('Bob agent')
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = await startTestServer()
    await failsWith(
      s.raw().call('PATCH', `/v1/app/channels/${s.channelId}`, { json: { label: 'x' } }),
      401,
    )
    await failsWith(
      s.agent.call('PATCH', `/v1/app/channels/${s.channelId}`, { json: { label: 'x' } }),
      403,
    )
    const { cookie } = await s.session()
    const foreign = await s.request('PATCH', `/v1/app/channels/${s.channelId}`, {
      cookie,
      origin: 'https://evil.example',
      json: { label: 'x' },
    })
    expect(foreign.status).toBe(403)
    expect((await s.agent.channel()).channel.label).toBe('Test agent')
    const ok = await s.request('PATCH', `/v1/app/channels/${s.channelId}`, {
      cookie,
      json: { label: 'From the app' },
    })
    expect(ok.body.channel.label).toBe('From the app')
  })
})

describe('DELETE /v1/app/channels/:id', () => {
  test('deletes the channel with its messages, tokens and files; the agent token is 401', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Stays')
    await say('hello')
    await s.agent.pin('status', { body: { text: 'green' } })
    const file = await s.agent.upload('a.txt', 'aaa', 'text/plain')
    await other.agent.upload('b.txt', 'bbb', 'text/plain')
    const dir = join(s.dir, 'files', s.channelId)
    expect(existsSync(join(dir, file.file_id))).toBe(true)

    expect(await remove(s.channelId)).toEqual({ ok: true })

    const err = await failsWith(s.agent.channel(), 401)
    expect(err.headers.get('www-authenticate')).toBe('Bearer')
    await failsWith(s.agent.send({ body: { text: 'x' } }), 401)
    expect(existsSync(dir)).toBe(false)
    expect(count(s.ctx, 'messages', 'channel_id = ?1', s.channelId)).toBe(0)
    expect(count(s.ctx, 'files', 'channel_id = ?1', s.channelId)).toBe(0)
    expect(count(s.ctx, 'tokens', 'channel_id = ?1', s.channelId)).toBe(0)
    expect((await s.person.channels()).channels.map((c) => c.id)).toEqual([other.channelId])
    // The other channel keeps its agent and its files.
    expect((await other.agent.channel()).channel.label).toBe('Stays')
    expect(existsSync(join(s.dir, 'files', other.channelId))).toBe(true)
  })

  test("answers the agent's held wait for an answer at once (404: the question is gone)", async () => {
    s = await startTestServer()
    const q = await s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'ok', label: 'Go' }] } })
    const held = s.agent.raw('GET', `/v1/asks/${q.message.id}`, { query: { wait: 50 } })
    await parked(1)
    await remove(s.channelId)
    const res = await settledWithin(held, 10_000)
    expect(res).not.toBe('pending')
    expect((res as Response).status).toBe(404)
    expect(s.ctx.waiters.size).toBe(0)
  })

  test("answers the agent's held change-feed long-poll at once", async () => {
    s = await startTestServer()
    const held = s.agent.raw('GET', '/v1/messages', { query: { wait: 50 } })
    await parked(1)
    await remove(s.channelId)
    expect(await settledWithin(held, 10_000)).not.toBe('pending')
    expect(s.ctx.waiters.size).toBe(0)
  })

  test("answers the person's held change-feed long-poll on that channel too", async () => {
    s = await startTestServer()
    const held = s.person.raw('GET', `/v1/app/channels/${s.channelId}/messages`, {
      query: { wait: 50 },
    })
    await parked(1)
    await remove(s.channelId)
    expect(await settledWithin(held, 10_000)).not.toBe('pending')
  })

  test("another person's channel, an unknown one, or one already deleted is 404", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(remove(bobs.channelId), 404)
    await bobs.agent.channel()
    await failsWith(remove('ch_nope'), 404)
    await remove(s.channelId)
    await failsWith(remove(s.channelId), 404)
  })

  test('needs a login (401); an agent token is 403, even on its own channel', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('DELETE', `/v1/app/channels/${s.channelId}`), 401)
    await failsWith(s.agent.call('DELETE', `/v1/app/channels/${s.channelId}`), 403)
    await s.agent.channel()
  })

  test('from the web app it needs the app origin', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    for (const origin of [null, 'null', 'https://evil.example']) {
      const res = await s.request('DELETE', `/v1/app/channels/${s.channelId}`, {
        cookie,
        origin,
      })
      expect(res.status).toBe(403)
    }
    await s.agent.channel()
    const ok = await s.request('DELETE', `/v1/app/channels/${s.channelId}`, { cookie })
    expect(ok.status).toBe(200)
    await failsWith(s.agent.channel(), 401)
  })
})
