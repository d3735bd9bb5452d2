import { afterEach, describe, expect, test } from 'bun:test'
import type { Block } from '../../src/messages/schema.ts'
import { startTestServer, TestClock, type TestServer } from '../harness.ts'
import { current, invalid, post } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

describe('POST /v1/messages: plain messages', () => {
  test('a text message comes back as the agent message record, and is in the feed', async () => {
    s = await startTestServer()
    const { message } = await s.agent.send({ body: { text: 'Build finished' } })
    expect(typeof message.id).toBe('string')
    expect(message.id.length).toBeGreaterThan(0)
    expect(message.sender).toBe('agent')
    expect(message.body).toEqual({ text: 'Build finished' })
    expect(Number.isInteger(message.created_at)).toBe(true)
    expect(message.updated_at).toBe(message.created_at)
    expect(message.ask).toBeUndefined()
    expect(message.silent).toBeUndefined()
    // The person's acknowledgement state belongs to the person's messages only.
    expect('state' in message).toBe(false)
    expect(await current(s, message.id)).toEqual(message)
  })

  test('a title alone, and a title with text', async () => {
    s = await startTestServer()
    const a = await s.agent.send({ body: { title: 'Deploy' } })
    expect(a.message.body).toEqual({ title: 'Deploy' })
    const b = await s.agent.send({ body: { title: 'Deploy', text: 'to staging' } })
    expect(b.message.body).toEqual({ title: 'Deploy', text: 'to staging' })
    expect(a.message.id).not.toBe(b.message.id)
  })

  test('created_at is the server clock, in milliseconds', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const { message } = await s.agent.send({ body: { text: 'x' } })
    expect(message.created_at).toBe(clock.now())
    expect(message.updated_at).toBe(clock.now())
  })

  test('silent: true is stored and returned; silent: false is the default', async () => {
    s = await startTestServer()
    const quiet = await s.agent.send({ body: { text: 'quiet' }, silent: true })
    expect(quiet.message.silent).toBe(true)
    expect((await current(s, quiet.message.id)).silent).toBe(true)
    const loud = await s.agent.send({ body: { text: 'loud' }, silent: false })
    expect(loud.message.silent).toBeUndefined()
  })

  test('blocks alone are enough content', async () => {
    s = await startTestServer()
    const { message } = await s.agent.send({ body: { blocks: [{ type: 'heading', text: 'H' }] } })
    expect(message.body).toEqual({ blocks: [{ type: 'heading', text: 'H' }] })
  })
})

describe('POST /v1/messages: display blocks', () => {
  test('every known display block type is accepted and stored as given', async () => {
    s = await startTestServer()
    const image = await s.agent.upload('shot.png', new Uint8Array([137, 80, 78, 71]), 'image/png')
    const report = await s.agent.upload('report.txt', 'all green', 'text/plain')
    const blocks: Block[] = [
      { type: 'markdown', id: 'md', text: '**bold** and `code`' },
      { type: 'heading', text: 'Results' },
      { type: 'code', code: 'console.log(1)', language: 'ts' },
      { type: 'code', code: 'ls -la' },
      { type: 'link', url: 'https://example.com/build/1', label: 'Build log' },
      { type: 'link', url: 'http://example.com' },
      { type: 'link', url: 'mailto:someone@example.com', label: 'Mail' },
      { type: 'progress', id: 'p', value: 3, max: 10, label: 'Tests' },
      { type: 'progress', value: 0.5 },
      {
        type: 'keyvalue',
        items: [
          { key: 'branch', value: 'main' },
          { key: 'commit', value: 'abc123' },
        ],
      },
      { type: 'keyvalue', items: [] },
      {
        type: 'table',
        columns: ['name', 'time'],
        rows: [
          ['unit', 1.5],
          ['e2e', '12s'],
        ],
      },
      { type: 'table', columns: [], rows: [] },
      { type: 'image', file_id: image.file_id, name: 'shot.png', alt: 'A screenshot' },
      { type: 'image', file_id: image.file_id },
      { type: 'file', file_id: report.file_id, name: 'report.txt', mime: 'text/plain', size: 9 },
      { type: 'file', file_id: report.file_id, name: 'report.txt' },
      { type: 'html', html: '<b>hi</b>', label: 'Chart', height: 2000 },
      { type: 'html', html: '<!doctype html><html><body>doc</body></html>' },
    ]
    const { message } = await s.agent.send({ body: { title: 'All blocks', blocks } })
    expect(message.body.blocks).toEqual(blocks)
    // A message of display blocks only is no question.
    expect(message.ask).toBeUndefined()
    expect((await current(s, message.id)).body.blocks).toEqual(blocks)
  })

  test('known blocks keep extra fields a newer agent adds', async () => {
    s = await startTestServer()
    const blocks = [{ type: 'markdown', text: 'x', theme: 'dark', extra: { nested: [1, null] } }]
    const { message } = await s.agent.send({ body: { blocks } })
    expect(message.body.blocks).toEqual(blocks)
  })

  test('unknown block types are stored exactly as given', async () => {
    s = await startTestServer()
    const blocks: Block[] = [
      { type: 'chart', id: 'c1', series: [{ x: [1, 2, 3], y: [4, 5, 6] }], options: null },
      { type: 'future_thing' },
      // Fields that would be invalid on a known type are the unknown type's business.
      { type: 'map', id: 'm', rows: 'not-an-array', options: [], url: 'javascript:void 0' },
      { type: 'x'.repeat(64), deeply: { nested: { value: [true, false, 'ü', 1e21] } } },
    ]
    const { message } = await s.agent.send({ body: { text: 'new things', blocks } })
    expect(message.body.blocks).toEqual(blocks)
    expect(message.ask).toBeUndefined()
    expect((await current(s, message.id)).body.blocks).toEqual(blocks)
  })

  test('block ids of 1 and of 64 characters are accepted', async () => {
    s = await startTestServer()
    const blocks = [
      { type: 'heading', id: 'a', text: 'one' },
      { type: 'heading', id: 'b'.repeat(64), text: 'sixty-four' },
    ]
    const { message } = await s.agent.send({ body: { blocks } })
    expect(message.body.blocks).toEqual(blocks)
  })

  test('the same block id may be used in two different messages', async () => {
    s = await startTestServer()
    await s.agent.send({ body: { blocks: [{ type: 'heading', id: 'h', text: '1' }] } })
    const { message } = await s.agent.send({
      body: { blocks: [{ type: 'heading', id: 'h', text: '2' }] },
    })
    expect(message.body.blocks?.[0]?.id).toBe('h')
  })
})

describe('POST /v1/messages: questions', () => {
  test('a choice makes the message an open question', async () => {
    s = await startTestServer()
    const blocks = [
      {
        type: 'choice',
        id: 'env',
        label: 'Where to?',
        options: [
          { label: 'Staging', value: 'stg', description: 'safe' },
          { label: 'Production', value: 'prod', danger: true },
        ],
        required: true,
      },
    ]
    const { message } = await s.agent.send({ body: { text: 'Deploy', blocks } })
    expect(message.ask).toEqual({ status: 'open' })
    expect(message.body.blocks).toEqual(blocks)
    const { asks } = await s.agent.asks()
    expect(asks.map((m) => m.id)).toEqual([message.id])
  })

  test('choice variants: multi, other, default (single and multi)', async () => {
    s = await startTestServer()
    const blocks = [
      {
        type: 'choice',
        id: 'single',
        options: [{ label: 'A' }, { label: 'B', value: 'b' }],
        default: 'b',
      },
      {
        type: 'choice',
        id: 'multi',
        multi: true,
        options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }],
        default: ['A', 'C'],
      },
      // With `other`, a default that is not an option is a typed answer.
      { type: 'choice', id: 'other', other: true, options: [{ label: 'A' }], default: 'Zed' },
      { type: 'choice', id: 'empty-multi', multi: true, options: [{ label: 'A' }], default: [] },
    ]
    const { message } = await s.agent.send({ body: { blocks } })
    expect(message.body.blocks).toEqual(blocks)
    expect(message.ask?.status).toBe('open')
  })

  test('every other input type, and their answers', async () => {
    s = await startTestServer()
    const blocks = [
      {
        type: 'text_input',
        id: 'name',
        label: 'Name',
        placeholder: 'v1.2',
        multiline: true,
        required: true,
        default: 'v1',
      },
      {
        type: 'number_input',
        id: 'count',
        label: 'How many',
        min: 1,
        max: 10,
        default: 10,
      },
      { type: 'toggle', id: 'notify', label: 'Notify', default: true },
      {
        type: 'confirm',
        id: 'go',
        label: 'Ship it',
        description: 'cannot be undone',
        danger: true,
      },
    ]
    const { message } = await s.agent.send({ body: { blocks } })
    expect(message.body.blocks).toEqual(blocks)
    expect(message.ask?.status).toBe('open')
    const answer = { name: 'v2', count: 3, notify: false, go: true }
    const answered = await s.person.answer(message.id, answer)
    expect(answered.answer).toEqual(answer)
    expect((await current(s, message.id)).ask).toMatchObject({ status: 'answered', answer })
  })

  test('an html question is an input; a plain html embed is not', async () => {
    s = await startTestServer()
    const q = await s.agent.send({
      body: { blocks: [{ type: 'html', id: 'pick', html: '<button>ok</button>', question: true }] },
    })
    expect(q.message.ask?.status).toBe('open')
    const answer = { picked: [1, 2], ok: true }
    expect((await s.person.answer(q.message.id, answer)).answer).toEqual(answer)

    const plain = await s.agent.send({
      body: { blocks: [{ type: 'html', html: '<i>x</i>', question: false }] },
    })
    expect(plain.message.ask).toBeUndefined()
  })

  test('number_input bounds may be equal, and a default on a bound is fine', async () => {
    s = await startTestServer()
    const blocks = [{ type: 'number_input', id: 'n', min: 5, max: 5, default: 5 }]
    const { message } = await s.agent.send({ body: { blocks } })
    expect(message.body.blocks).toEqual(blocks)
  })

  test('expires_in on a question sets ask.expires_at from the server clock', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const { message } = await s.agent.send({
      body: { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] },
      expires_in: 90,
    })
    expect(message.ask).toEqual({ status: 'open', expires_at: clock.now() + 90_000 })
  })

  test('a fractional expires_in is kept to the millisecond', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const { message } = await s.agent.send({
      body: { blocks: [{ type: 'toggle', id: 't', label: 'T' }] },
      expires_in: 0.25,
    })
    expect(message.ask?.expires_at).toBe(clock.now() + 250)
  })

  test('the longest expires_in (30 days) is accepted', async () => {
    s = await startTestServer()
    const { message } = await s.agent.send({
      body: { blocks: [{ type: 'toggle', id: 't', label: 'T' }] },
      expires_in: 30 * 24 * 3600,
    })
    expect(message.ask?.status).toBe('open')
  })

  test('display blocks and inputs mix in one question', async () => {
    s = await startTestServer()
    const blocks = [
      { type: 'markdown', text: 'Pick one' },
      { type: 'choice', id: 'c', options: [{ label: 'yes' }, { label: 'no' }] },
      { type: 'unknown_widget', id: 'u' },
    ]
    const { message } = await s.agent.send({ body: { blocks } })
    expect(message.ask?.status).toBe('open')
    // One input block: the answer is that input's value.
    expect((await s.person.answer(message.id, 'no')).answer).toBe('no')
  })
})

describe('POST /v1/messages: the request as JSON', () => {
  test('a raw JSON request with a charset in the content type works', async () => {
    s = await startTestServer()
    const res = await s.agent.raw('POST', '/v1/messages', {
      body: JSON.stringify({ body: { text: 'raw' } }),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    const data = (await res.json()) as { message: { body: unknown } }
    expect(data.message.body).toEqual({ text: 'raw' })
  })

  test('unicode text round-trips', async () => {
    s = await startTestServer()
    const text = 'Grüße 👋 — 日本語 \u0000 nul'
    const { message } = await post(s, { body: { text } })
    expect(message.body.text).toBe(text)
    expect((await current(s, message.id)).body.text).toBe(text)
  })
})

describe("the person's messages (same validation, no inputs)", () => {
  test('a person message is sender human with state null', async () => {
    s = await startTestServer()
    const { message } = await s.person.send(s.channelId, {
      text: 'hi',
      blocks: [
        { type: 'markdown', text: '*x*' },
        { type: 'sticker', id: 's', name: 'wave' },
      ],
    })
    expect(message.sender).toBe('human')
    expect(message.state).toBeNull()
    expect(message.ask).toBeUndefined()
    expect(await current(s, message.id)).toEqual(message)
  })

  test('input blocks in a person message → 400 body.blocks[i].type, nothing written', async () => {
    s = await startTestServer()
    const path = `/v1/app/channels/${s.channelId}/messages`
    await invalid(
      s,
      () =>
        s.person.call('POST', path, {
          json: { body: { text: 'x', blocks: [{ type: 'confirm', id: 'c', label: 'OK' }] } },
        }),
      'body.blocks[0].type',
    )
    await invalid(
      s,
      () =>
        s.person.call('POST', path, {
          json: { body: { blocks: [{ type: 'html', id: 'h', html: 'x', question: true }] } },
        }),
      'body.blocks[0].type',
    )
    await invalid(s, () => s.person.call('POST', path, { json: { body: {} } }), 'body')
    await invalid(
      s,
      () => s.person.call('POST', path, { json: { body: { text: 'x' }, expires_in: 5 } }),
      'expires_in',
    )
  })
})
