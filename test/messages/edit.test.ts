import { afterEach, describe, expect, test } from 'bun:test'
import { startTestServer, TestClock, type TestServer } from '../harness.ts'
import { board, current, editCalls, invalid, rejects } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const { put, sendBoard, sendQuestion } = editCalls(() => s)

describe('PATCH /v1/messages/:id', () => {
  test('title and text are replaced; the rest stays; updated_at moves, created_at does not', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const m = await sendBoard()
    clock.advance(5000)
    const { message } = await s.agent.edit(m.id, { title: 'T2', text: 'new text' })
    expect(message.id).toBe(m.id)
    expect(message.body).toEqual({ title: 'T2', text: 'new text', blocks: board() })
    expect(message.created_at).toBe(m.created_at)
    expect(message.updated_at).toBe(m.created_at + 5000)
    expect(await current(s, m.id)).toEqual(message)
  })

  test('null title and null text remove them', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.edit(m.id, { title: null, text: null })
    expect(message.body).toEqual({ blocks: board() })
    expect('title' in message.body).toBe(false)
    expect('text' in message.body).toBe(false)
  })

  test('blocks replaces the whole block list', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    const blocks = [{ type: 'code', code: 'x', language: 'sh' }]
    const { message } = await s.agent.edit(m.id, { blocks })
    expect(message.body).toEqual({ title: 'T', text: 'body text', blocks })
  })

  test('block_patches as an array merges fields by block id', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.edit(m.id, {
      block_patches: [
        { id: 'p', value: 7 },
        { id: 'h', text: 'Build (7/10)' },
      ],
    })
    const want = board()
    want[0] = { type: 'heading', id: 'h', text: 'Build (7/10)' }
    want[1] = { type: 'progress', id: 'p', value: 7, max: 10, label: 'steps' }
    expect(message.body.blocks).toEqual(want)
    expect(message.body.title).toBe('T')
  })

  test('block_patches as an object keyed by id merges the same way', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.edit(m.id, {
      block_patches: { p: { value: 9, label: 'almost' } },
    })
    expect(message.body.blocks?.[1]).toEqual({
      type: 'progress',
      id: 'p',
      value: 9,
      max: 10,
      label: 'almost',
    })
  })

  test('blocks and block_patches together: replaced first, then patched', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.edit(m.id, {
      blocks: [{ type: 'progress', id: 'q', value: 0 }],
      block_patches: [{ id: 'q', value: 1 }],
    })
    expect(message.body.blocks).toEqual([{ type: 'progress', id: 'q', value: 1 }])
  })

  test('patching an unknown block type keeps its fields', async () => {
    s = await startTestServer()
    const m = (
      await s.agent.send({
        body: { blocks: [{ type: 'chart', id: 'c', series: [1], color: 'red' }] },
      })
    ).message
    const { message } = await s.agent.edit(m.id, { block_patches: { c: { series: [1, 2] } } })
    expect(message.body.blocks).toEqual([{ type: 'chart', id: 'c', series: [1, 2], color: 'red' }])
  })

  test('an edit re-appears once in the change feed', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    const { cursor } = await s.agent.feed()
    const { message } = await s.agent.edit(m.id, { text: 'x' })
    const next = await s.agent.feed({ since: cursor })
    expect(next.messages).toEqual([message])
  })

  test('changing only the text of an answered question → 200', async () => {
    s = await startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'B')
    const { message } = await s.agent.edit(q.id, { text: 'Picked B, thanks' })
    expect(message.body.text).toBe('Picked B, thanks')
    expect(message.ask).toMatchObject({ status: 'answered', answer: 'B' })
  })

  test('patching a display block of an answered question → 200', async () => {
    s = await startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'A')
    const { message } = await s.agent.edit(q.id, { block_patches: { intro: { text: 'Done' } } })
    expect(message.body.blocks?.[0]).toEqual({ type: 'markdown', id: 'intro', text: 'Done' })
  })

  test('editing the inputs of an open question is allowed', async () => {
    s = await startTestServer()
    const q = await sendQuestion()
    const { message } = await s.agent.edit(q.id, {
      block_patches: [{ id: 'c', options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }] }],
    })
    expect(message.ask?.status).toBe('open')
    expect((await s.person.answer(q.id, 'C')).answer).toBe('C')
  })
})

describe('PUT /v1/messages/:id', () => {
  test('replaces the whole body', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.replace(m.id, { text: 'only this' })
    expect(message.body).toEqual({ text: 'only this' })
    expect(message.created_at).toBe(m.created_at)
    expect(await current(s, m.id)).toEqual(message)
  })

  test('replacing an answered question with the same inputs and new text → 200', async () => {
    s = await startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'A')
    const { message } = await s.agent.replace(q.id, { ...q.body, text: 'Answered: A' })
    expect(message.body.text).toBe('Answered: A')
    expect(message.ask?.status).toBe('answered')
  })

  test('the same inputs with their keys in another order are the same inputs → 200', async () => {
    s = await startTestServer()
    const q = (
      await s.agent.send({
        body: {
          blocks: [{ type: 'choice', id: 'c', options: [{ label: 'A', value: 'a' }], multi: true }],
        },
      })
    ).message
    await s.person.answer(q.id, ['a'])
    const reordered = [
      { multi: true, options: [{ value: 'a', label: 'A' }], id: 'c', type: 'choice' },
    ]
    const { message } = await s.agent.replace(q.id, { text: 'Thanks', blocks: reordered })
    expect(message.body.text).toBe('Thanks')
    expect(message.ask).toMatchObject({ status: 'answered', answer: ['a'] })
  })

  test('replacing the inputs of an answered question → 409', async () => {
    s = await startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'B')
    await rejects(
      s,
      () => put(q.id, { body: { blocks: [{ type: 'toggle', id: 't', label: 'T' }] } }),
      409,
    )
  })

  test('invalid bodies → 400 naming body.* fields, nothing written', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    await invalid(s, () => put(m.id, { body: {} }), 'body')
    await invalid(s, () => put(m.id, {}), 'body')
    await invalid(s, () => put(m.id, { body: { text: 'x', extra: 1 } }), 'body.extra')
    await invalid(
      s,
      () => put(m.id, { body: { blocks: [{ type: 'choice', id: 'c' }] } }),
      'body.blocks[0].options',
    )
    await invalid(
      s,
      () => put(m.id, { body: { blocks: [{ type: 'progress', value: 1, max: -1 }] } }),
      'body.blocks[0].max',
    )
    await invalid(s, () => put(m.id, { body: { text: 'x' }, silent: true }), 'silent')
  })

  test('adding inputs to a plain message → 400; removing all inputs of a question → 400', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    await invalid(
      s,
      () => put(m.id, { body: { blocks: [{ type: 'confirm', id: 'ok', label: 'OK' }] } }),
      'body.blocks',
    )
    const q = await sendQuestion()
    await invalid(s, () => put(q.id, { body: { text: 'no more question' } }), 'body.blocks')
  })
})

describe('DELETE /v1/messages/:id', () => {
  test('answers { ok: true }; afterwards edit, replace, delete and state are 404', async () => {
    s = await startTestServer()
    const m = await sendBoard()
    expect(await s.agent.remove(m.id)).toEqual({ ok: true })
    await rejects(s, () => s.agent.edit(m.id, { text: 'x' }), 404)
    await rejects(s, () => s.agent.replace(m.id, { text: 'x' }), 404)
    await rejects(s, () => s.agent.remove(m.id), 404)
    await rejects(s, () => s.agent.ack(m.id, 'seen'), 404)
  })

  test('a deleted question leaves the open asks', async () => {
    s = await startTestServer()
    const q = await sendQuestion()
    await s.agent.remove(q.id)
    expect((await s.agent.asks()).asks).toEqual([])
    expect((await s.agent.feed()).messages).toEqual([{ id: q.id, deleted: true }])
  })
})
