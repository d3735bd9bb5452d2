import { afterEach, describe, expect, test } from 'bun:test'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { agentCall, board, current, editCalls, invalid, rejects } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const patch = (id: string, json: unknown) => agentCall(s, 'PATCH', `/v1/messages/${id}`, json)
const { put, sendBoard, sendQuestion } = editCalls(() => s)

describe('PATCH /v1/messages/:id', () => {
  describe('400s, with nothing written', () => {
    test('an unknown block id in the array form → block_patches[0].id', async () => {
      s = await startTestServer()
      const m = await sendBoard()
      await invalid(
        s,
        () => patch(m.id, { block_patches: [{ id: 'nope', value: 1 }] }),
        'block_patches[0].id',
      )
    })

    test('an unknown id after a known one → block_patches[1].id, and the first is not applied', async () => {
      s = await startTestServer()
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
      s = await startTestServer()
      const m = await sendBoard()
      await invalid(
        s,
        () => patch(m.id, { block_patches: { ghost: { value: 1 } } }),
        'block_patches.ghost',
      )
    })

    test('a patch without id in the array form → 400', async () => {
      s = await startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { block_patches: [{ value: 1 }] }), 'block_patches')
    })

    test('a merged block that is invalid → 400 naming it', async () => {
      s = await startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { block_patches: [{ id: 'p', max: 0 }] }), 'blocks[1].max')
      await invalid(s, () => patch(m.id, { block_patches: { h: { text: 42 } } }), 'blocks[0].text')
    })

    test('invalid replacement blocks → 400 naming them', async () => {
      s = await startTestServer()
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
      s = await startTestServer()
      const m = await sendBoard()
      const other = await s.addChannel()
      const theirs = await other.agent.upload('x.png', new Uint8Array([1]), 'image/png')
      await invalid(
        s,
        () => patch(m.id, { blocks: [{ type: 'image', file_id: theirs.file_id }] }),
        'blocks[0].file_id',
      )
    })

    test('an empty patch → 400', async () => {
      s = await startTestServer()
      const m = await sendBoard()
      const e = await invalid(s, () => patch(m.id, {}), null)
      expect(e.error).toContain('nothing to change')
    })

    test('an unknown field → 400 naming it', async () => {
      s = await startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { text: 'x', colour: 'red' }), 'colour')
    })

    test('wrong types → 400 naming the field', async () => {
      s = await startTestServer()
      const m = await sendBoard()
      await invalid(s, () => patch(m.id, { title: 5 }), 'title')
      await invalid(s, () => patch(m.id, { text: ['x'] }), 'text')
      await invalid(s, () => patch(m.id, { blocks: 'x' }), 'blocks')
    })

    test('removing all content → 400 body', async () => {
      s = await startTestServer()
      const m = (await s.agent.send({ body: { text: 'only text' } })).message
      await invalid(s, () => patch(m.id, { text: null }), 'body')
      await invalid(s, () => patch(m.id, { text: '', blocks: [] }), 'body')
    })

    test('adding an input block to a plain message → 400', async () => {
      s = await startTestServer()
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
      s = await startTestServer()
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
      s = await startTestServer()
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
      s = await startTestServer()
      const q = await sendQuestion()
      await s.agent.cancel(q.id)
      await rejects(s, () => patch(q.id, { block_patches: { c: { multi: true } } }), 409)
    })

    test('editing the inputs of an expired question → 409', async () => {
      const clock = new TestClock()
      s = await startTestServer({ clock })
      const q = await sendQuestion({ expires_in: 60 })
      clock.advance(61_000)
      // Reading the question settles it as expired.
      expect((await s.agent.ask(q.id)).message.ask?.status).toBe('expired')
      await rejects(s, () => patch(q.id, { block_patches: { c: { label: 'late' } } }), 409)
    })

    test('editing the inputs of an overdue question → 409, before any timer expired it', async () => {
      const clock = new TestClock()
      s = await startTestServer({ clock })
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
      s = await startTestServer()
      const q = await sendQuestion()
      await s.person.answer(q.id, 'A')
      await rejects(s, () => patch(q.id, { blocks: [{ type: 'markdown', text: 'x' }] }), 409)
    })
  })
})

describe('404 for unknown ids and for another channel', () => {
  test('unknown ids → 404 on every route', async () => {
    s = await startTestServer()
    await sendBoard()
    for (const id of ['msg_unknown', 'x', '%20', 'a'.repeat(300)]) {
      await rejects(s, () => patch(id, { text: 'x' }), 404)
      await rejects(s, () => put(id, { body: { text: 'x' } }), 404)
      await rejects(s, () => agentCall(s, 'DELETE', `/v1/messages/${id}`), 404)
      await rejects(s, () => s.agent.ack(id, 'seen'), 404)
    }
  })

  test("another channel's message ids are 404, and nothing of theirs changes", async () => {
    s = await startTestServer()
    const other = await s.addChannel()
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
    s = await startTestServer()
    const h = (await s.person.send(s.channelId, { text: 'mine' })).message
    await rejects(s, () => s.agent.edit(h.id, { text: 'changed' }), 403)
    await rejects(s, () => s.agent.replace(h.id, { text: 'changed' }), 403)
    await rejects(s, () => s.agent.remove(h.id), 403)
    expect(await current(s, h.id)).toEqual(h)
  })
})

describe('authentication on the edit routes', () => {
  test('no token or a garbage token → 401; a person token → 403', async () => {
    s = await startTestServer()
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
    s = await startTestServer()
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
    s = await startTestServer()
    await rejects(s, () => s.raw().call('POST', '/v1/messages', { json: { body: {} } }), 401)
    await rejects(s, () => s.raw('nope').call('PATCH', '/v1/messages/x', { json: {} }), 401)
  })
})
