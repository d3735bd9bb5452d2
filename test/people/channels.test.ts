import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { ChannelSummary } from '../../src/channels/schema.ts'
import type { FileInfo } from '../../src/files/schema.ts'
import { LIMITS } from '../../src/messages/limits.ts'
import type { Pin } from '../../src/messages/pin-schema.ts'
import type { Message } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count, fieldOf, settledWithin } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']

const summary = async (id = s.channelId, person: Person = s.person) =>
  (await person.channels()).channels.find((c) => c.id === id) as ChannelSummary
const rename = (id: string, label: unknown, person: Person = s.person) =>
  person.call<{ channel: ChannelSummary }>('PATCH', `/v1/app/channels/${id}`, { json: { label } })
const remove = (id: string, person: Person = s.person) =>
  person.call<{ ok: true }>('DELETE', `/v1/app/channels/${id}`)
const markRead = (id = s.channelId, person: Person = s.person) =>
  person.call<{ channel: ChannelSummary }>('POST', `/v1/app/channels/${id}/read`)
const pinsOf = (id = s.channelId, person: Person = s.person) =>
  person.call<{ pins: Pin[] }>('GET', `/v1/app/channels/${id}/pins`)
const upload = (id: string, name: string, data: BodyInit, mime = 'text/plain') =>
  s.person.call<FileInfo>('POST', `/v1/app/channels/${id}/files`, {
    query: { name },
    body: data,
    headers: { 'content-type': mime },
  })
const download = (id: string, fileId: string, person: Person = s.person) =>
  person.raw('GET', `/v1/app/channels/${id}/files/${fileId}`)
/** Resolves once `n` long-polls are parked (they park after an await or two). */
async function parked(n: number): Promise<void> {
  for (let i = 0; i < 200 && s.ctx.waiters.size < n; i++) await Bun.sleep(5)
  expect(s.ctx.waiters.size).toBe(n)
}
const say = (text: string) => s.agent.send({ body: { text } }).then((r) => r.message)

describe('GET /v1/app/channels', () => {
  test('lists my channels only, oldest first, each with unread and the last message', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
    clock.advance(1) // creation times are in ms: a tie would order by id
    const other = s.addChannel('Second')
    s.addChannel('Bob agent', 'bob@example.com')
    const { channels } = await s.person.channels()
    expect(channels.map((c) => [c.id, c.label])).toEqual([
      [s.channelId, 'Test agent'],
      [other.channelId, 'Second'],
    ])
    expect(channels[0]).toMatchObject({ unread: 0, last_message: null, open_asks: 0, pins: 0 })
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/channels'), 401)
    await failsWith(s.personClient(s.addChannel().token).channels(), 403)
  })
})

describe('GET /v1/app/channels/:id', () => {
  test('answers the same summary the list shows', async () => {
    s = startTestServer()
    await say('hello')
    const { channel } = await s.person.call<{ channel: ChannelSummary }>(
      'GET',
      `/v1/app/channels/${s.channelId}`,
    )
    expect(channel).toEqual(await summary())
    expect(channel.unread).toBe(1)
  })

  test("another person's channel or an unknown id is 404", async () => {
    s = startTestServer()
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(s.person.call('GET', `/v1/app/channels/${bobs.channelId}`), 404)
    await failsWith(s.person.call('GET', '/v1/app/channels/ch_nope'), 404)
  })
})

describe('PATCH /v1/app/channels/:id', () => {
  test('renames the channel: the agent sees its new label', async () => {
    s = startTestServer()
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
    s = startTestServer()
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
    s = startTestServer()
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(rename(bobs.channelId, 'Mine now'), 404)
    await failsWith(rename('ch_nope', 'x'), 404)
    expect((await bobs.agent.channel()).channel.label).toBe('Bob agent')
  })

  test('needs a login (401); an agent token is 403; a cookie needs the app origin', async () => {
    s = startTestServer()
    await failsWith(
      s.raw().call('PATCH', `/v1/app/channels/${s.channelId}`, { json: { label: 'x' } }),
      401,
    )
    await failsWith(
      s.agent.call('PATCH', `/v1/app/channels/${s.channelId}`, { json: { label: 'x' } }),
      403,
    )
    const { cookie } = s.session()
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
    s = startTestServer()
    const other = s.addChannel('Stays')
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
    s = startTestServer()
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
    s = startTestServer()
    const held = s.agent.raw('GET', '/v1/messages', { query: { wait: 50 } })
    await parked(1)
    await remove(s.channelId)
    expect(await settledWithin(held, 10_000)).not.toBe('pending')
    expect(s.ctx.waiters.size).toBe(0)
  })

  test("answers the person's held change-feed long-poll on that channel too", async () => {
    s = startTestServer()
    const held = s.person.raw('GET', `/v1/app/channels/${s.channelId}/messages`, {
      query: { wait: 50 },
    })
    await parked(1)
    await remove(s.channelId)
    expect(await settledWithin(held, 10_000)).not.toBe('pending')
  })

  test("another person's channel, an unknown one, or one already deleted is 404", async () => {
    s = startTestServer()
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(remove(bobs.channelId), 404)
    await bobs.agent.channel()
    await failsWith(remove('ch_nope'), 404)
    await remove(s.channelId)
    await failsWith(remove(s.channelId), 404)
  })

  test('needs a login (401); an agent token is 403, even on its own channel', async () => {
    s = startTestServer()
    await failsWith(s.raw().call('DELETE', `/v1/app/channels/${s.channelId}`), 401)
    await failsWith(s.agent.call('DELETE', `/v1/app/channels/${s.channelId}`), 403)
    await s.agent.channel()
  })

  test('from the web app it needs the app origin', async () => {
    s = startTestServer()
    const { cookie } = s.session()
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

describe('unread counts', () => {
  test("count the agent's messages after the last read; POST /read resets them", async () => {
    s = startTestServer()
    await say('one')
    await say('two')
    expect((await summary()).unread).toBe(2)
    const read = await markRead()
    expect(read.channel.id).toBe(s.channelId)
    expect(read.channel.unread).toBe(0)
    expect((await summary()).unread).toBe(0)
    await say('three')
    expect((await summary()).unread).toBe(1)
  })

  test("ignore the person's own messages", async () => {
    s = startTestServer()
    await s.person.send(s.channelId, { text: 'from me' })
    expect((await summary()).unread).toBe(0)
    await say('from the agent')
    await s.person.send(s.channelId, { text: 'me again' })
    expect((await summary()).unread).toBe(1)
  })

  test('ignore deleted messages and pins', async () => {
    s = startTestServer()
    const gone = await say('to be deleted')
    await say('kept')
    await s.agent.pin('status', { body: { text: 'building' } })
    await s.agent.pin('progress', { body: { text: '10%' } })
    expect((await summary()).unread).toBe(2)
    await s.agent.remove(gone.id)
    expect((await summary()).unread).toBe(1)
    await s.agent.editPin('status', { text: 'green' })
    expect((await summary()).unread).toBe(1)
  })

  test('reading counts to the newest message even when a pin came last', async () => {
    s = startTestServer()
    await say('one')
    await s.agent.pin('status', { body: { text: 'x' } })
    await markRead()
    expect((await summary()).unread).toBe(0)
    await say('two')
    expect((await summary()).unread).toBe(1)
  })

  test('edits, answers and acknowledgments of read messages do not make them unread', async () => {
    s = startTestServer()
    const m = await say('draft')
    const q = await s.agent.send({ body: { blocks: [{ type: 'confirm', id: 'ok', label: 'Go' }] } })
    const mine = (await s.person.send(s.channelId, { text: 'task' })).message
    await markRead()
    await s.agent.edit(m.id, { text: 'final' })
    await s.person.answer(q.message.id, true)
    await s.agent.ack(mine.id, 'done')
    expect((await summary()).unread).toBe(0)
  })

  test('deleting a message after reading it does not make the count go wrong', async () => {
    s = startTestServer()
    const a = await say('a')
    await markRead()
    await s.agent.remove(a.id)
    expect((await summary()).unread).toBe(0)
    await say('b')
    expect((await summary()).unread).toBe(1)
    // Reading a channel whose newest message was deleted never moves the mark back.
    const b = (await s.person.channels()).channels[0]?.last_message as Message
    await markRead()
    await s.agent.remove(b.id)
    await markRead()
    await say('c')
    expect((await summary()).unread).toBe(1)
  })

  test('are per channel', async () => {
    s = startTestServer()
    const other = s.addChannel('Other')
    await say('here')
    await other.agent.send({ body: { text: 'there' } })
    await other.agent.send({ body: { text: 'there again' } })
    await markRead(other.channelId)
    expect((await summary()).unread).toBe(1)
    expect((await summary(other.channelId)).unread).toBe(0)
  })

  test('stop counting at 1000 (the app shows 999+)', async () => {
    s = startTestServer()
    for (let i = 0; i < 1001; i++) await say(`m${i}`)
    expect((await summary()).unread).toBe(1000)
    expect((await markRead()).channel.unread).toBe(0)
  })

  test('reading an empty channel is fine', async () => {
    s = startTestServer()
    const { channel } = await markRead()
    expect(channel).toMatchObject({ id: s.channelId, unread: 0, last_message: null })
  })

  test("POST /read: another person's channel or an unknown one is 404; 401; 403; origin", async () => {
    s = startTestServer()
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    const bob = s.addPerson('bob@example.com')
    await bobs.agent.send({ body: { text: 'for bob' } })
    await failsWith(markRead(bobs.channelId), 404)
    await failsWith(markRead('ch_nope'), 404)
    expect((await summary(bobs.channelId, bob)).unread).toBe(1)
    await failsWith(s.raw().call('POST', `/v1/app/channels/${s.channelId}/read`), 401)
    await failsWith(s.agent.call('POST', `/v1/app/channels/${s.channelId}/read`), 403)
    await say('x')
    const { cookie } = s.session()
    const foreign = await s.request('POST', `/v1/app/channels/${s.channelId}/read`, {
      cookie,
      origin: null,
    })
    expect(foreign.status).toBe(403)
    expect((await summary()).unread).toBe(1)
    const ok = await s.request('POST', `/v1/app/channels/${s.channelId}/read`, { cookie })
    expect(ok.body.channel.unread).toBe(0)
  })
})

describe('last_message', () => {
  test('is the newest live, unpinned message, from either side, in its latest form', async () => {
    s = startTestServer()
    expect((await summary()).last_message).toBeNull()
    const a = await say('first')
    expect((await summary()).last_message).toEqual(a)
    const mine = (await s.person.send(s.channelId, { text: 'reply' })).message
    expect((await summary()).last_message).toEqual(mine)
    await s.agent.pin('status', { body: { text: 'pinned, not last' } })
    expect((await summary()).last_message?.id).toBe(mine.id)
    const acked = (await s.agent.ack(mine.id, 'working')).message
    expect((await summary()).last_message).toEqual(acked)
  })

  test('steps back when the newest is deleted, and is null when none is left', async () => {
    s = startTestServer()
    const a = await say('a')
    const b = await say('b')
    await s.agent.remove(b.id)
    expect((await summary()).last_message?.id).toBe(a.id)
    await s.agent.remove(a.id)
    expect((await summary()).last_message).toBeNull()
  })

  test('shows an edit of the newest message', async () => {
    s = startTestServer()
    const a = await say('a')
    const edited = (await s.agent.edit(a.id, { text: 'a, edited' })).message
    expect((await summary()).last_message).toEqual(edited)
  })
})

describe('GET /v1/app/channels/:id/pins', () => {
  test("lists the channel's pins as the agent sees them", async () => {
    s = startTestServer()
    expect(await pinsOf()).toEqual({ pins: [] })
    await s.agent.pin('status', { body: { text: 'green' } })
    await s.agent.pin('build', { body: { title: 'Build', text: '42%' } })
    await say('not a pin')
    const { pins } = await pinsOf()
    expect(pins).toEqual((await s.agent.pins()).pins)
    expect(pins.map((p) => p.key).sort()).toEqual(['build', 'status'])
    expect((await summary()).pins).toBe(2)
  })

  test("another person's channel or an unknown one is 404; 401; 403", async () => {
    s = startTestServer()
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    await bobs.agent.pin('secret', { body: { text: 'bob only' } })
    await failsWith(pinsOf(bobs.channelId), 404)
    await failsWith(pinsOf('ch_nope'), 404)
    await failsWith(s.raw().call('GET', `/v1/app/channels/${s.channelId}/pins`), 401)
    await failsWith(s.agent.call('GET', `/v1/app/channels/${s.channelId}/pins`), 403)
  })
})

describe("the person's files", () => {
  test('the person uploads to a channel; the agent and the person download it', async () => {
    s = startTestServer()
    const info = await upload(s.channelId, 'notes.txt', 'hello agent')
    expect(info).toMatchObject({ name: 'notes.txt', mime: 'text/plain', size: 11 })
    expect(info.file_id).toStartWith('file_')
    const byAgent = await s.agent.download(info.file_id)
    expect(byAgent.status).toBe(200)
    expect(await byAgent.text()).toBe('hello agent')
    const byPerson = await download(s.channelId, info.file_id)
    expect(byPerson.status).toBe(200)
    expect(byPerson.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await byPerson.text()).toBe('hello agent')
    expect(existsSync(join(s.dir, 'files', s.channelId, info.file_id))).toBe(true)
  })

  test("the person downloads the agent's files, HTML as an attachment", async () => {
    s = startTestServer()
    const info = await s.agent.upload('page.html', '<script>alert(1)</script>', 'text/html')
    const res = await download(s.channelId, info.file_id)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/octet-stream')
    expect(res.headers.get('content-disposition')).toStartWith('attachment')
    expect(res.headers.get('x-content-type-options')).toBe('nosniff')
  })

  test("a file is reached only through its own channel; another person's channel is 404", async () => {
    s = startTestServer()
    const other = s.addChannel('Other')
    const bobs = s.addChannel('Bob agent', 'bob@example.com')
    const mine = await s.agent.upload('a.txt', 'a', 'text/plain')
    const bobFile = await bobs.agent.upload('b.txt', 'b', 'text/plain')
    expect((await download(other.channelId, mine.file_id)).status).toBe(404)
    expect((await download(bobs.channelId, bobFile.file_id)).status).toBe(404)
    expect((await download(s.channelId, bobFile.file_id)).status).toBe(404)
    expect((await download(s.channelId, 'file_nope')).status).toBe(404)
    await failsWith(upload(bobs.channelId, 'x.txt', 'x'), 404)
    await failsWith(upload('ch_nope', 'x.txt', 'x'), 404)
    expect(count(s.ctx, 'files', 'channel_id = ?1', bobs.channelId)).toBe(1)
  })

  test('an upload without a name is 400 naming name, and leaves nothing behind', async () => {
    s = startTestServer()
    const res = await s.person.raw('POST', `/v1/app/channels/${s.channelId}/files`, {
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    })
    expect(res.status).toBe(400)
    expect(await fieldOf(res)).toBe('name')
    expect(count(s.ctx, 'files')).toBe(0)
  })

  test('needs a login (401); an agent token is 403; a cookie upload needs the app origin', async () => {
    s = startTestServer()
    const info = await s.agent.upload('a.txt', 'a', 'text/plain')
    expect(
      (await s.raw().raw('GET', `/v1/app/channels/${s.channelId}/files/${info.file_id}`)).status,
    ).toBe(401)
    expect(
      (await s.agent.raw('GET', `/v1/app/channels/${s.channelId}/files/${info.file_id}`)).status,
    ).toBe(403)
    await failsWith(
      s
        .raw()
        .call('POST', `/v1/app/channels/${s.channelId}/files`, { query: { name: 'x' }, body: 'x' }),
      401,
    )
    const { cookie } = s.session()
    const foreign = await s.request('POST', `/v1/app/channels/${s.channelId}/files?name=x.txt`, {
      cookie,
      origin: 'https://evil.example',
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    })
    expect(foreign.status).toBe(403)
    expect(count(s.ctx, 'files')).toBe(1)
    const ok = await s.request('POST', `/v1/app/channels/${s.channelId}/files?name=x.txt`, {
      cookie,
      body: 'x',
      headers: { 'content-type': 'text/plain' },
    })
    expect(ok.status).toBe(200)
    const got = await s.request('GET', `/v1/app/channels/${s.channelId}/files/${ok.body.file_id}`, {
      cookie,
      origin: null,
    })
    expect(got.status).toBe(200)
    expect(got.body).toBe('x')
  })
})
