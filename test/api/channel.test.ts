import { afterEach, describe, expect, test } from 'bun:test'
import { LIMITS } from '../../src/messages/limits.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

describe('GET /v1/channel', () => {
  test('answers { channel: { id, label, open_asks, pins, created_at, updated_at } }', async () => {
    s = await startTestServer()
    const { channel } = await s.agent.channel()
    expect(channel.id).toBe(s.channelId)
    expect(channel.label).toBe('Test agent')
    expect(channel.open_asks).toBe(0)
    expect(channel.pins).toBe(0)
    expect(Number.isInteger(channel.created_at)).toBe(true)
    expect(Number.isInteger(channel.updated_at)).toBe(true)
  })

  test('counts open questions, and stops counting answered and cancelled ones', async () => {
    s = await startTestServer()
    const ask = (id: string) =>
      s.agent.send({ body: { blocks: [{ type: 'confirm', id, label: 'Go' }] } })
    const a = await ask('a')
    const b = await ask('b')
    await ask('c')
    await s.agent.send({ body: { text: 'not a question' } })
    expect((await s.agent.channel()).channel.open_asks).toBe(3)
    await s.person.answer(a.message.id, true)
    await s.agent.cancel(b.message.id)
    expect((await s.agent.channel()).channel.open_asks).toBe(1)
  })

  test('is the record the person sees in GET /v1/app/channels, plus unread and the last message', async () => {
    s = await startTestServer()
    await s.agent.pin('p', { body: { text: 'x' } })
    const { message } = await s.agent.send({ body: { text: 'hello' } })
    const { channel } = await s.agent.channel()
    const { channels } = await s.person.channels()
    expect(channels.find((c) => c.id === s.channelId)).toEqual({
      ...channel,
      unread: 1,
      last_message: message,
    })
  })
})

describe('PATCH /v1/agent', () => {
  test('renames the agent; the person sees the new label', async () => {
    s = await startTestServer()
    const res = await s.agent.rename('Build bot')
    expect(res.agent.label).toBe('Build bot')
    expect(res.channel.label).toBe('Build bot')
    expect(res.channel.id).toBe(s.channelId)
    expect((await s.agent.channel()).channel.label).toBe('Build bot')
    const { channels } = await s.person.channels()
    expect(channels.find((c) => c.id === s.channelId)?.label).toBe('Build bot')
  })

  test('trims surrounding whitespace and keeps unicode', async () => {
    s = await startTestServer()
    expect((await s.agent.rename('  Déploiement 🚀  ')).agent.label).toBe('Déploiement 🚀')
  })

  test(`accepts a label of exactly ${LIMITS.labelChars} characters`, async () => {
    s = await startTestServer()
    const label = 'x'.repeat(LIMITS.labelChars)
    expect((await s.agent.rename(label)).agent.label).toBe(label)
  })

  test('renaming moves updated_at and touches only this channel', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Other')
    const before = (await s.agent.channel()).channel
    const { channel } = await s.agent.rename('Renamed')
    expect(channel.updated_at).toBeGreaterThanOrEqual(before.updated_at)
    expect(channel.created_at).toBe(before.created_at)
    expect((await other.agent.channel()).channel.label).toBe('Other')
  })

  test('an empty, blank, too long or non-string label is 400 naming the field label', async () => {
    s = await startTestServer()
    const bad: unknown[] = [
      '',
      '   ',
      '\n\t',
      'x'.repeat(LIMITS.labelChars + 1),
      42,
      null,
      true,
      ['a'],
      { text: 'a' },
    ]
    for (const label of bad) {
      const res = await s.agent.raw('PATCH', '/v1/agent', { json: { label } })
      expect(res.status).toBe(400)
      const body = (await res.json()) as { error: unknown; field: unknown }
      expect(typeof body.error).toBe('string')
      expect(body.field).toBe('label')
    }
    const missing = await s.agent.raw('PATCH', '/v1/agent', { json: {} })
    expect(missing.status).toBe(400)
    expect(((await missing.json()) as { field: string }).field).toBe('label')
    expect((await s.agent.channel()).channel.label).toBe('Test agent')
  })

  test('a body that is not a JSON object is 400 with a JSON error', async () => {
    s = await startTestServer()
    for (const body of ['{not json', '"a string"', '[]']) {
      const res = await s.agent.raw('PATCH', '/v1/agent', {
        body,
        headers: { 'content-type': 'application/json' },
      })
      expect(res.status).toBe(400)
      expect(typeof ((await res.json()) as { error: unknown }).error).toBe('string')
    }
    const empty = await s.agent.raw('PATCH', '/v1/agent')
    expect(empty.status).toBe(400)
    expect(typeof ((await empty.json()) as { error: unknown }).error).toBe('string')
  })

  test('the client rename helper reports the 400', async () => {
    s = await startTestServer()
    expect((await failsWith(s.agent.rename(''), 400)).field).toBe('label')
  })
})
