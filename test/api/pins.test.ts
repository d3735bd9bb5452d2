import { afterEach, describe, expect, test } from 'bun:test'
import { LIMITS } from '../../src/messages/limits.ts'
import type { Message } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

describe('PUT /v1/pins/:key', () => {
  test('creates a pin: { pin: { key, message } } with message.pin = key', async () => {
    s = await startTestServer()
    const { pin } = await s.agent.pin('build', { body: { title: 'Build', text: 'running' } })
    expect(pin.key).toBe('build')
    expect(pin.message.pin).toBe('build')
    expect(pin.message.sender).toBe('agent')
    expect(pin.message.channel_id).toBe(s.channelId)
    expect(pin.message.body).toEqual({ title: 'Build', text: 'running' })
    expect(typeof pin.message.id).toBe('string')
    expect(Number.isInteger(pin.message.created_at)).toBe(true)
    expect(pin.message.ask).toBeUndefined()
  })

  test('PUT again replaces the whole body in place (same message id)', async () => {
    s = await startTestServer()
    const first = await s.agent.pin('build', {
      body: { title: 'Build', text: 'running', blocks: [{ type: 'progress', id: 'p', value: 1 }] },
    })
    const second = await s.agent.pin('build', { body: { text: 'passed' } })
    expect(second.pin.message.id).toBe(first.pin.message.id)
    expect(second.pin.message.body).toEqual({ text: 'passed' })
    expect(second.pin.message.created_at).toBe(first.pin.message.created_at)
    expect(second.pin.message.updated_at).toBeGreaterThanOrEqual(first.pin.message.updated_at)
    const { pins } = await s.agent.pins()
    expect(pins).toHaveLength(1)
    expect(pins[0]?.message.body).toEqual({ text: 'passed' })
  })

  test('accepts the silent flag and keys with letters, digits and . _ - :', async () => {
    s = await startTestServer()
    for (const key of ['a', 'build:main', 'ci.deploy-2_x', 'A'.repeat(LIMITS.pinKeyChars)]) {
      const { pin } = await s.agent.pin(key, { body: { text: key }, silent: true })
      expect(pin.key).toBe(key)
      expect(pin.message.pin).toBe(key)
    }
    expect((await s.agent.pins()).pins).toHaveLength(4)
  })

  test('keys are case-sensitive', async () => {
    s = await startTestServer()
    await s.agent.pin('Build', { body: { text: 'upper' } })
    await s.agent.pin('build', { body: { text: 'lower' } })
    const { pins } = await s.agent.pins()
    expect(pins.map((p) => p.key).sort()).toEqual(['Build', 'build'])
  })

  test('an invalid key is 400 naming the field key', async () => {
    s = await startTestServer()
    const bad = [
      'k'.repeat(LIMITS.pinKeyChars + 1),
      'has space',
      'slash/inside',
      'bang!',
      'ümlaut',
      'semi;colon',
      'per%cent',
    ]
    for (const key of bad) {
      const e = await failsWith(s.agent.pin(key, { body: { text: 'x' } }), 400)
      expect(e.field).toBe('key')
      expect(e.error).toContain('key')
    }
    expect((await s.agent.pins()).pins).toEqual([])
  })

  test('an invalid key is 400 on PATCH and DELETE too (not 404)', async () => {
    s = await startTestServer()
    const long = 'k'.repeat(LIMITS.pinKeyChars + 1)
    expect((await failsWith(s.agent.editPin(long, { text: 'x' }), 400)).field).toBe('key')
    expect((await failsWith(s.agent.unpin('bad key'), 400)).field).toBe('key')
  })

  test('input blocks in a pin are 400; nothing is pinned', async () => {
    s = await startTestServer()
    const inputs = [
      { type: 'confirm', id: 'go', label: 'Go' },
      { type: 'choice', id: 'c', options: [{ label: 'a' }] },
      { type: 'text_input', id: 't' },
      { type: 'number_input', id: 'n' },
      { type: 'toggle', id: 'g', label: 'On' },
      { type: 'html', id: 'h', html: '<b>x</b>', question: true },
    ]
    for (const block of inputs) {
      const e = await failsWith(s.agent.pin('q', { body: { text: 'x', blocks: [block] } }), 400)
      expect(e.field).toBe('body.blocks[0].type')
    }
    expect((await s.agent.pins()).pins).toEqual([])
    expect((await s.agent.asks()).asks).toEqual([])
  })

  test('an invalid body is 400 naming the field, and an existing pin stays as it was', async () => {
    s = await startTestServer()
    await s.agent.pin('p', { body: { text: 'kept' } })
    const e = await failsWith(
      s.agent.pin('p', { body: { blocks: [{ type: 'progress', value: 'half' }] } }),
      400,
    )
    expect(e.field).toBe('body.blocks[0].value')
    expect((await failsWith(s.agent.pin('p', { body: {} }), 400)).field).toBe('body')
    const missing = await s.agent.raw('PUT', '/v1/pins/p', { json: { silent: true } })
    expect(missing.status).toBe(400)
    const { pins } = await s.agent.pins()
    expect(pins[0]?.message.body).toEqual({ text: 'kept' })
  })

  test('the 51st pin is 409; replacing an existing pin at the limit still works', async () => {
    s = await startTestServer()
    for (let i = 0; i < LIMITS.pinsPerChannel; i++) {
      await s.agent.pin(`k${i}`, { body: { text: `pin ${i}` } })
    }
    const e = await failsWith(s.agent.pin('one-too-many', { body: { text: 'no' } }), 409)
    expect(e.error).toContain(String(LIMITS.pinsPerChannel))
    const { pin } = await s.agent.pin('k0', { body: { text: 'replaced' } })
    expect(pin.message.body.text).toBe('replaced')
    expect((await s.agent.pins()).pins).toHaveLength(LIMITS.pinsPerChannel)
    expect((await s.agent.channel()).channel.pins).toBe(LIMITS.pinsPerChannel)
    // Removing one frees a place.
    await s.agent.unpin('k1')
    await s.agent.pin('one-too-many', { body: { text: 'now fits' } })
  })
})

describe('PATCH /v1/pins/:key', () => {
  test('edits like a message PATCH: title, text, null removes', async () => {
    s = await startTestServer()
    const made = await s.agent.pin('status', { body: { title: 'T', text: 'old' } })
    const { pin } = await s.agent.editPin('status', { text: 'new', title: null })
    expect(pin.key).toBe('status')
    expect(pin.message.id).toBe(made.pin.message.id)
    expect(pin.message.body).toEqual({ text: 'new' })
    expect(pin.message.pin).toBe('status')
  })

  test('block_patches merge into a progress block by id (array and object forms)', async () => {
    s = await startTestServer()
    await s.agent.pin('deploy', {
      body: {
        title: 'Deploy',
        blocks: [
          { type: 'progress', id: 'bar', value: 0, max: 10, label: 'starting' },
          { type: 'markdown', id: 'log', text: '...' },
        ],
      },
    })
    const one = await s.agent.editPin('deploy', {
      block_patches: [{ id: 'bar', value: 4, label: 'copying' }],
    })
    expect(one.pin.message.body.blocks?.[0]).toEqual({
      type: 'progress',
      id: 'bar',
      value: 4,
      max: 10,
      label: 'copying',
    })
    expect(one.pin.message.body.blocks?.[1]).toEqual({ type: 'markdown', id: 'log', text: '...' })
    const two = await s.agent.editPin('deploy', { block_patches: { bar: { value: 10 } } })
    expect(two.pin.message.body.blocks?.[0]).toMatchObject({ id: 'bar', value: 10, max: 10 })
    expect(two.pin.message.body.title).toBe('Deploy')
  })

  test('a patch that breaks a block is 400 and changes nothing', async () => {
    s = await startTestServer()
    await s.agent.pin('deploy', { body: { blocks: [{ type: 'progress', id: 'bar', value: 1 }] } })
    const bad = await failsWith(
      s.agent.editPin('deploy', { block_patches: [{ id: 'bar', max: -1 }] }),
      400,
    )
    expect(bad.field).toBe('blocks[0].max')
    const unknown = await failsWith(
      s.agent.editPin('deploy', { block_patches: [{ id: 'nope', value: 2 }] }),
      400,
    )
    expect(unknown.field).toBe('block_patches[0].id')
    await failsWith(s.agent.editPin('deploy', {}), 400)
    const { pins } = await s.agent.pins()
    expect(pins[0]?.message.body.blocks?.[0]).toEqual({ type: 'progress', id: 'bar', value: 1 })
  })

  test('PATCH cannot add input blocks to a pin (400)', async () => {
    s = await startTestServer()
    await s.agent.pin('p', { body: { text: 'x' } })
    const e = await failsWith(
      s.agent.editPin('p', { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] }),
      400,
    )
    expect(e.field).toBe('blocks[0].type')
  })

  test('an unknown key is 404 with a JSON error', async () => {
    s = await startTestServer()
    const e = await failsWith(s.agent.editPin('missing', { text: 'x' }), 404)
    expect(typeof e.error).toBe('string')
    expect(e.error.length).toBeGreaterThan(0)
  })
})

describe('GET /v1/pins', () => {
  test('is { pins: [] } at first, then lists every pin of the channel', async () => {
    s = await startTestServer()
    expect(await s.agent.pins()).toEqual({ pins: [] })
    await s.agent.pin('b', { body: { text: 'B' } })
    await s.agent.pin('a', { body: { text: 'A' } })
    const { pins } = await s.agent.pins()
    expect(pins).toHaveLength(2)
    for (const pin of pins) {
      expect(pin.message.pin).toBe(pin.key)
      expect(pin.message.body.text).toBe(pin.key.toUpperCase())
    }
  })

  test('ordinary messages are not pins', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { text: 'not a pin' } })
    expect((await s.agent.pins()).pins).toEqual([])
  })
})

describe('DELETE /v1/pins/:key', () => {
  test('answers { ok: true }; then PATCH and DELETE of the key are 404', async () => {
    s = await startTestServer()
    await s.agent.pin('gone', { body: { text: 'bye' } })
    expect(await s.agent.unpin('gone')).toEqual({ ok: true })
    expect((await s.agent.pins()).pins).toEqual([])
    await failsWith(s.agent.editPin('gone', { text: 'x' }), 404)
    await failsWith(s.agent.unpin('gone'), 404)
  })

  test('the key can be used again afterwards, as a new message', async () => {
    s = await startTestServer()
    const old = await s.agent.pin('k', { body: { text: 'one' } })
    await s.agent.unpin('k')
    const fresh = await s.agent.pin('k', { body: { text: 'two' } })
    expect(fresh.pin.message.id).not.toBe(old.pin.message.id)
  })

  test('an unknown key is 404', async () => {
    s = await startTestServer()
    await failsWith(s.agent.unpin('never'), 404)
  })
})

describe('pins and messages', () => {
  test('pins travel through the change feed, with pin: key, and their deletion too', async () => {
    s = await startTestServer()
    const start = await s.agent.feed({ peek: true })
    const { pin } = await s.agent.pin('ci', { body: { text: 'queued' } })
    const created = await s.agent.feed({ since: start.cursor, peek: true })
    expect(created.messages).toHaveLength(1)
    expect(created.messages[0]).toMatchObject({ id: pin.message.id, pin: 'ci' })

    await s.agent.editPin('ci', { text: 'running' })
    await s.agent.pin('ci', { body: { text: 'passed' } })
    const changed = await s.agent.feed({ since: created.cursor, peek: true })
    expect(changed.messages).toHaveLength(1)
    const latest = changed.messages[0] as Message
    expect(latest.id).toBe(pin.message.id)
    expect(latest.pin).toBe('ci')
    expect(latest.body).toEqual({ text: 'passed' })

    await s.agent.unpin('ci')
    const deleted = await s.agent.feed({ since: changed.cursor, peek: true })
    expect(deleted.messages).toEqual([{ id: pin.message.id, deleted: true }])
  })

  test("the person's feed shows pins too", async () => {
    s = await startTestServer()
    await s.agent.pin('ci', { body: { text: 'queued' } })
    const { messages } = await s.person.feed(s.channelId)
    expect(messages).toHaveLength(1)
    expect((messages[0] as Message).pin).toBe('ci')
  })

  test('a long-poll on the feed is woken by a pin edit', async () => {
    s = await startTestServer()
    await s.agent.pin('ci', { body: { text: 'queued' } })
    const { cursor } = await s.agent.feed({ peek: true })
    const waiting = s.agent.feed({ since: cursor, wait: 10, peek: true })
    await s.agent.editPin('ci', { text: 'running' })
    const { messages } = await waiting
    expect(messages).toHaveLength(1)
    expect((messages[0] as Message).body.text).toBe('running')
  })

  test('DELETE /v1/messages/:id of a pinned message removes the pin', async () => {
    s = await startTestServer()
    const { pin } = await s.agent.pin('temp', { body: { text: 'x' } })
    expect(await s.agent.remove(pin.message.id)).toEqual({ ok: true })
    expect((await s.agent.pins()).pins).toEqual([])
    expect((await s.agent.channel()).channel.pins).toBe(0)
    await failsWith(s.agent.editPin('temp', { text: 'y' }), 404)
    // The key is free again.
    const again = await s.agent.pin('temp', { body: { text: 'back' } })
    expect(again.pin.message.id).not.toBe(pin.message.id)
  })

  test('PATCH /v1/messages/:id of a pinned message edits the pin', async () => {
    s = await startTestServer()
    const { pin } = await s.agent.pin('p', { body: { text: 'x' } })
    const { message } = await s.agent.edit(pin.message.id, { text: 'via message' })
    expect(message.pin).toBe('p')
    const { pins } = await s.agent.pins()
    expect(pins[0]?.message.body.text).toBe('via message')
  })

  test('PUT /v1/messages/:id of a pinned message cannot add input blocks either', async () => {
    s = await startTestServer()
    const { pin } = await s.agent.pin('p', { body: { text: 'x' } })
    await failsWith(
      s.agent.replace(pin.message.id, {
        text: 'q',
        blocks: [{ type: 'confirm', id: 'go', label: 'Go' }],
      }),
      400,
    )
    expect((await s.agent.asks()).asks).toEqual([])
  })

  test('GET /v1/channel counts pins', async () => {
    s = await startTestServer()
    await s.agent.pin('a', { body: { text: 'a' } })
    await s.agent.pin('b', { body: { text: 'b' } })
    await s.agent.send({ body: { text: 'plain' } })
    expect((await s.agent.channel()).channel.pins).toBe(2)
  })

  test('error bodies are JSON { error } with a JSON content type', async () => {
    s = await startTestServer()
    for (const [method, key, json] of [
      ['PATCH', 'missing', { text: 'x' }],
      ['DELETE', 'missing', undefined],
      ['PUT', 'bad%20key', { body: { text: 'x' } }],
      ['PUT', 'ok', { body: 'not an object' }],
    ] as const) {
      const res = await s.agent.raw(method, `/v1/pins/${key}`, { json })
      expect(res.status).toBeGreaterThanOrEqual(400)
      expect(res.headers.get('content-type')).toContain('application/json')
      const body = (await res.json()) as { error: unknown }
      expect(typeof body.error).toBe('string')
    }
    // Without a token, 401.
    expect((await s.raw().raw('DELETE', '/v1/pins/missing')).status).toBe(401)
  })
})
