import { afterEach, describe, expect, test } from 'bun:test'
import type { Block, Message } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { agentCall, current, invalid, rejects } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const patch = (id: string, json: unknown) => agentCall(s, 'PATCH', `/v1/messages/${id}`, json)
const put = (id: string, json: unknown) => agentCall(s, 'PUT', `/v1/messages/${id}`, json)

const board = (): Block[] => [
  { type: 'heading', id: 'h', text: 'Build' },
  { type: 'progress', id: 'p', value: 1, max: 10, label: 'steps' },
  { type: 'markdown', text: 'no id here' },
]

async function sendBoard(): Promise<Message> {
  return (await s.agent.send({ body: { title: 'T', text: 'body text', blocks: board() } })).message
}

async function sendQuestion(extra: object = {}): Promise<Message> {
  const body = {
    text: 'Pick',
    blocks: [
      { type: 'markdown', id: 'intro', text: 'Choose wisely' },
      { type: 'choice', id: 'c', options: [{ label: 'A' }, { label: 'B' }] },
    ],
  }
  return (await s.agent.send({ body, ...extra })).message
}

describe('PATCH /v1/messages/:id', () => {
  test('title and text are replaced; the rest stays; updated_at moves, created_at does not', async () => {
    const clock = new TestClock()
    s = startTestServer({ clock })
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
    s = startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.edit(m.id, { title: null, text: null })
    expect(message.body).toEqual({ blocks: board() })
    expect('title' in message.body).toBe(false)
    expect('text' in message.body).toBe(false)
  })

  test('blocks replaces the whole block list', async () => {
    s = startTestServer()
    const m = await sendBoard()
    const blocks = [{ type: 'code', code: 'x', language: 'sh' }]
    const { message } = await s.agent.edit(m.id, { blocks })
    expect(message.body).toEqual({ title: 'T', text: 'body text', blocks })
  })

  test('block_patches as an array merges fields by block id', async () => {
    s = startTestServer()
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
    s = startTestServer()
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
    s = startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.edit(m.id, {
      blocks: [{ type: 'progress', id: 'q', value: 0 }],
      block_patches: [{ id: 'q', value: 1 }],
    })
    expect(message.body.blocks).toEqual([{ type: 'progress', id: 'q', value: 1 }])
  })

  test('patching an unknown block type keeps its fields', async () => {
    s = startTestServer()
    const m = (
      await s.agent.send({
        body: { blocks: [{ type: 'chart', id: 'c', series: [1], color: 'red' }] },
      })
    ).message
    const { message } = await s.agent.edit(m.id, { block_patches: { c: { series: [1, 2] } } })
    expect(message.body.blocks).toEqual([{ type: 'chart', id: 'c', series: [1, 2], color: 'red' }])
  })

  test('an edit re-appears once in the change feed', async () => {
    s = startTestServer()
    const m = await sendBoard()
    const { cursor } = await s.agent.feed()
    const { message } = await s.agent.edit(m.id, { text: 'x' })
    const next = await s.agent.feed({ since: cursor })
    expect(next.messages).toEqual([message])
  })

  test('changing only the text of an answered question → 200', async () => {
    s = startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'B')
    const { message } = await s.agent.edit(q.id, { text: 'Picked B, thanks' })
    expect(message.body.text).toBe('Picked B, thanks')
    expect(message.ask).toMatchObject({ status: 'answered', answer: 'B' })
  })

  test('patching a display block of an answered question → 200', async () => {
    s = startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'A')
    const { message } = await s.agent.edit(q.id, { block_patches: { intro: { text: 'Done' } } })
    expect(message.body.blocks?.[0]).toEqual({ type: 'markdown', id: 'intro', text: 'Done' })
  })

  test('editing the inputs of an open question is allowed', async () => {
    s = startTestServer()
    const q = await sendQuestion()
    const { message } = await s.agent.edit(q.id, {
      block_patches: [{ id: 'c', options: [{ label: 'A' }, { label: 'B' }, { label: 'C' }] }],
    })
    expect(message.ask?.status).toBe('open')
    expect((await s.person.answer(q.id, 'C')).answer).toBe('C')
  })

  describe('400s, with nothing written', () => {
    test('an unknown block id in the array form → block_patches[0].id', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(
        s,
        () => patch(m.id, { block_patches: [{ id: 'nope', value: 1 }] }),
        'block_patches[0].id',
      )
    })

    test('an unknown id after a known one → block_patches[1].id, and the first is not applied', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(
        s,
        () =>
          patch(m.id, {
            block_patches: [
              { id: 'p', value: 5 },
              { id: 'ghost', value: 1 },
            ],
          }),
        'block_patches[1].id',
      )
      expect((await current(s, m.id)).body.blocks).toEqual(board())
    })

    test('an unknown block id in the object form → block_patches.<id>', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(
        s,
        () => patch(m.id, { block_patches: { ghost: { value: 1 } } }),
        'block_patches.ghost',
      )
    })

    test('a patch without id in the array form → 400', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { block_patches: [{ value: 1 }] }), 'block_patches')
    })

    test('a merged block that is invalid → 400 naming it', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { block_patches: [{ id: 'p', max: 0 }] }), 'blocks[1].max')
      await invalid(s, () => patch(m.id, { block_patches: { h: { text: 42 } } }), 'blocks[0].text')
    })

    test('invalid replacement blocks → 400 naming them', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(
        s,
        () => patch(m.id, { blocks: [{ type: 'table', columns: ['a'], rows: [['1', '2']] }] }),
        'blocks[0].rows[0]',
      )
      await invalid(
        s,
        () => patch(m.id, { blocks: [{ type: 'link', url: 'javascript:x' }] }),
        'blocks[0].url',
      )
      await invalid(
        s,
        () =>
          patch(m.id, {
            blocks: [
              { type: 'heading', id: 'x', text: '1' },
              { type: 'heading', id: 'x', text: '2' },
            ],
          }),
        'blocks[1].id',
      )
    })

    test("an image block naming another channel's file → 400", async () => {
      s = startTestServer()
      const m = await sendBoard()
      const other = s.addChannel()
      const theirs = await other.agent.upload('x.png', new Uint8Array([1]), 'image/png')
      await invalid(
        s,
        () => patch(m.id, { blocks: [{ type: 'image', file_id: theirs.file_id }] }),
        'blocks[0].file_id',
      )
    })

    test('an empty patch → 400', async () => {
      s = startTestServer()
      const m = await sendBoard()
      const e = await invalid(s, () => patch(m.id, {}), null)
      expect(e.error).toContain('nothing to change')
    })

    test('an unknown field → 400 naming it', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { text: 'x', colour: 'red' }), 'colour')
    })

    test('wrong types → 400 naming the field', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { title: 5 }), 'title')
      await invalid(s, () => patch(m.id, { text: ['x'] }), 'text')
      await invalid(s, () => patch(m.id, { blocks: 'x' }), 'blocks')
    })

    test('removing all content → 400 body', async () => {
      s = startTestServer()
      const m = (await s.agent.send({ body: { text: 'only text' } })).message
      await invalid(s, () => patch(m.id, { text: null }), 'body')
      await invalid(s, () => patch(m.id, { text: '', blocks: [] }), 'body')
    })

    test('adding an input block to a plain message → 400', async () => {
      s = startTestServer()
      const m = await sendBoard()
      await invalid(
        s,
        () => patch(m.id, { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] }),
        'blocks',
      )
      // Nor by turning a display block into an html question.
      await invalid(
        s,
        () => patch(m.id, { block_patches: { h: { type: 'html', html: 'x', question: true } } }),
        'blocks',
      )
    })

    test('removing all inputs of an open question → 400', async () => {
      s = startTestServer()
      const q = await sendQuestion()
      await invalid(
        s,
        () => patch(q.id, { blocks: [{ type: 'markdown', text: 'gone' }] }),
        'blocks',
      )
      expect((await s.agent.asks()).asks.map((m) => m.id)).toEqual([q.id])
    })
  })

  describe('409: inputs of a question that is no longer open', () => {
    test('editing the inputs of an answered question → 409', async () => {
      s = startTestServer()
      const q = await sendQuestion()
      await s.person.answer(q.id, 'A')
      await rejects(s, () => patch(q.id, { block_patches: [{ id: 'c', label: 'changed' }] }), 409)
      await rejects(
        s,
        () => patch(q.id, { blocks: [{ type: 'toggle', id: 't', label: 'T' }] }),
        409,
      )
    })

    test('editing the inputs of a cancelled question → 409', async () => {
      s = startTestServer()
      const q = await sendQuestion()
      await s.agent.cancel(q.id)
      await rejects(s, () => patch(q.id, { block_patches: { c: { multi: true } } }), 409)
    })

    test('editing the inputs of an expired question → 409', async () => {
      const clock = new TestClock()
      s = startTestServer({ clock })
      const q = await sendQuestion({ expires_in: 60 })
      clock.advance(61_000)
      // Reading the question settles it as expired.
      expect((await s.agent.ask(q.id)).message.ask?.status).toBe('expired')
      await rejects(s, () => patch(q.id, { block_patches: { c: { label: 'late' } } }), 409)
    })

    test('editing the inputs of an overdue question → 409, before any timer expired it', async () => {
      const clock = new TestClock()
      s = startTestServer({ clock })
      const q = await sendQuestion({ expires_in: 60 })
      clock.advance(61_000)
      // The expiry timer runs on real time and has not fired: only the clock says it is due.
      await failsWith(patch(q.id, { block_patches: { c: { label: 'late' } } }), 409)
      const { message, answer } = await s.agent.ask(q.id)
      expect(message.ask?.status).toBe('expired')
      expect(answer).toBeNull()
      expect(message.body.blocks).toEqual(q.body.blocks)
    })

    test('removing every input of an answered question → 409', async () => {
      s = startTestServer()
      const q = await sendQuestion()
      await s.person.answer(q.id, 'A')
      await rejects(s, () => patch(q.id, { blocks: [{ type: 'markdown', text: 'x' }] }), 409)
    })
  })
})

describe('PUT /v1/messages/:id', () => {
  test('replaces the whole body', async () => {
    s = startTestServer()
    const m = await sendBoard()
    const { message } = await s.agent.replace(m.id, { text: 'only this' })
    expect(message.body).toEqual({ text: 'only this' })
    expect(message.created_at).toBe(m.created_at)
    expect(await current(s, m.id)).toEqual(message)
  })

  test('replacing an answered question with the same inputs and new text → 200', async () => {
    s = startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'A')
    const { message } = await s.agent.replace(q.id, { ...q.body, text: 'Answered: A' })
    expect(message.body.text).toBe('Answered: A')
    expect(message.ask?.status).toBe('answered')
  })

  test('the same inputs with their keys in another order are the same inputs → 200', async () => {
    s = startTestServer()
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
    s = startTestServer()
    const q = await sendQuestion()
    await s.person.answer(q.id, 'B')
    await rejects(
      s,
      () => put(q.id, { body: { blocks: [{ type: 'toggle', id: 't', label: 'T' }] } }),
      409,
    )
  })

  test('invalid bodies → 400 naming body.* fields, nothing written', async () => {
    s = startTestServer()
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
    s = startTestServer()
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
    s = startTestServer()
    const m = await sendBoard()
    expect(await s.agent.remove(m.id)).toEqual({ ok: true })
    await rejects(s, () => s.agent.edit(m.id, { text: 'x' }), 404)
    await rejects(s, () => s.agent.replace(m.id, { text: 'x' }), 404)
    await rejects(s, () => s.agent.remove(m.id), 404)
    await rejects(s, () => s.agent.ack(m.id, 'seen'), 404)
  })

  test('a deleted question leaves the open asks', async () => {
    s = startTestServer()
    const q = await sendQuestion()
    await s.agent.remove(q.id)
    expect((await s.agent.asks()).asks).toEqual([])
    expect((await s.agent.feed()).messages).toEqual([{ id: q.id, deleted: true }])
  })
})

describe('404 for unknown ids and for another channel', () => {
  test('unknown ids → 404 on every route', async () => {
    s = startTestServer()
    await sendBoard()
    for (const id of ['msg_unknown', 'x', '%20', 'a'.repeat(300)]) {
      await rejects(s, () => patch(id, { text: 'x' }), 404)
      await rejects(s, () => put(id, { body: { text: 'x' } }), 404)
      await rejects(s, () => agentCall(s, 'DELETE', `/v1/messages/${id}`), 404)
      await rejects(s, () => s.agent.ack(id, 'seen'), 404)
    }
  })

  test("another channel's message ids are 404, and nothing of theirs changes", async () => {
    s = startTestServer()
    const other = s.addChannel()
    const theirs = (await other.agent.send({ body: { text: 'theirs', blocks: board() } })).message
    const theirPerson = (await s.person.send(other.channelId, { text: 'to the other agent' }))
      .message
    await rejects(s, () => s.agent.edit(theirs.id, { text: 'mine now' }), 404)
    await rejects(s, () => s.agent.replace(theirs.id, { text: 'mine now' }), 404)
    await rejects(s, () => s.agent.remove(theirs.id), 404)
    await rejects(s, () => s.agent.ack(theirPerson.id, 'done'), 404)
    await rejects(s, () => s.agent.edit(theirPerson.id, { text: 'x' }), 404)
    const stillTheirs = (await other.agent.feed({ peek: true })).messages
    expect(stillTheirs).toEqual([theirs, theirPerson])
  })
})

describe("403: the agent cannot change the person's messages", () => {
  test('edit, replace and delete of a human message → 403, nothing written', async () => {
    s = startTestServer()
    const h = (await s.person.send(s.channelId, { text: 'mine' })).message
    await rejects(s, () => s.agent.edit(h.id, { text: 'changed' }), 403)
    await rejects(s, () => s.agent.replace(h.id, { text: 'changed' }), 403)
    await rejects(s, () => s.agent.remove(h.id), 403)
    expect(await current(s, h.id)).toEqual(h)
  })
})

describe('authentication on the edit routes', () => {
  test('no token or a garbage token → 401; a person token → 403', async () => {
    s = startTestServer()
    const m = await sendBoard()
    const routes: [string, string, unknown][] = [
      ['PATCH', `/v1/messages/${m.id}`, { text: 'x' }],
      ['PUT', `/v1/messages/${m.id}`, { body: { text: 'x' } }],
      ['DELETE', `/v1/messages/${m.id}`, undefined],
      ['POST', `/v1/messages/${m.id}/state`, { state: 'seen' }],
      ['POST', '/v1/messages', { body: { text: 'x' } }],
    ]
    for (const [method, path, json] of routes) {
      const o = json === undefined ? {} : { json }
      await rejects(s, () => s.raw().call(method, path, o), 401)
      await rejects(s, () => s.raw('hark_agent_garbage').call(method, path, o), 401)
      await rejects(s, () => s.raw(`Bearer ${'x'.repeat(5)}`).call(method, path, o), 401)
      await rejects(s, () => s.person.call(method, path, o), 403)
    }
  })

  test('a stranger gets 401 even with a body that is not JSON', async () => {
    s = startTestServer()
    await rejects(
      s,
      () =>
        s.raw().call('POST', '/v1/messages', {
          body: '{not json',
          headers: { 'content-type': 'application/json' },
        }),
      401,
    )
  })

  test('a stranger gets 401 even with an invalid body', async () => {
    s = startTestServer()
    await rejects(s, () => s.raw().call('POST', '/v1/messages', { json: { body: {} } }), 401)
    await rejects(s, () => s.raw('nope').call('PATCH', '/v1/messages/x', { json: {} }), 401)
  })
})
