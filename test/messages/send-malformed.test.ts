import { afterEach, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../harness.ts'
import { invalid, post } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

describe('POST /v1/messages: malformed requests', () => {
  test('an empty body (no text, title or blocks) → 400 body', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: {} }), 'body')
  })

  test('an empty text and an empty block list are no content', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: { text: '', title: '', blocks: [] } }), 'body')
  })

  test('a request without body → 400 body', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { silent: true }), 'body')
  })

  test('a body that is not an object → 400 body', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: 'hello' }), 'body')
    await invalid(s, () => post(s, { body: null }), 'body')
    await invalid(s, () => post(s, { body: ['text'] }), 'body')
  })

  test('a request that is not a JSON object → 400', async () => {
    s = await startTestServer()
    for (const json of [[], 'text', 42, null]) {
      const e = await invalid(
        s,
        () =>
          s.agent.call('POST', '/v1/messages', {
            body: JSON.stringify(json),
            headers: { 'content-type': 'application/json' },
          }),
        null,
      )
      expect(e.error).toContain('object')
    }
  })

  test('a request that is not JSON → 400, not 422 or 500', async () => {
    s = await startTestServer()
    const e = await invalid(
      s,
      () =>
        s.agent.call('POST', '/v1/messages', {
          body: '{"body": {"text": "x"',
          headers: { 'content-type': 'application/json' },
        }),
      null,
    )
    expect(e.error).toContain('JSON')
  })

  test('a request without any body at all → 400 naming the missing body', async () => {
    s = await startTestServer()
    await invalid(s, () => s.agent.call('POST', '/v1/messages'), 'body')
  })

  test('an unknown top-level field → 400 naming it', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: { text: 'x' }, colour: 'red' }), 'colour')
  })

  test('an unknown field inside body → 400 naming it', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: { text: 'x', subtitle: 'y' } }), 'body.subtitle')
  })

  test('wrong types of text, title, blocks and silent → 400 naming each', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: { text: 5 } }), 'body.text')
    await invalid(s, () => post(s, { body: { title: false, text: 'x' } }), 'body.title')
    await invalid(s, () => post(s, { body: { blocks: { type: 'heading' } } }), 'body.blocks')
    await invalid(s, () => post(s, { body: { text: 'x' }, silent: 'yes' }), 'silent')
  })

  test('a title over 500 characters → 400 body.title', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: { title: 't'.repeat(501) } }), 'body.title')
  })

  test('more than 100 blocks → 400 body.blocks', async () => {
    s = await startTestServer()
    const blocks = Array.from({ length: 101 }, () => ({ type: 'heading', text: 'h' }))
    await invalid(s, () => post(s, { body: { blocks } }), 'body.blocks')
  })

  test('a body over 256 KiB in all → 400 body', async () => {
    s = await startTestServer()
    const blocks = [
      { type: 'html', html: 'a'.repeat(200_000) },
      { type: 'html', html: 'b'.repeat(70_000) },
    ]
    await invalid(s, () => post(s, { body: { blocks } }), 'body')
  })

  test('expires_in on a message without inputs → 400 expires_in', async () => {
    s = await startTestServer()
    await invalid(s, () => post(s, { body: { text: 'x' }, expires_in: 60 }), 'expires_in')
    // A plain html embed is no input either.
    await invalid(
      s,
      () => post(s, { body: { blocks: [{ type: 'html', html: 'x' }] }, expires_in: 60 }),
      'expires_in',
    )
  })

  test('expires_in of 0, a negative number, a string or beyond 30 days → 400 expires_in', async () => {
    s = await startTestServer()
    const body = { blocks: [{ type: 'confirm', id: 'go', label: 'Go' }] }
    for (const expires_in of [0, -1, '60', null, 30 * 24 * 3600 + 1]) {
      await invalid(s, () => post(s, { body, expires_in }), 'expires_in')
    }
  })

  test('the first invalid field is named and nothing of a valid part is written', async () => {
    s = await startTestServer()
    // Several good blocks, one bad, and a valid expires_in: nothing at all is stored.
    await invalid(
      s,
      () =>
        post(s, {
          body: {
            title: 't',
            blocks: [
              { type: 'confirm', id: 'ok', label: 'OK' },
              { type: 'progress', value: 1, max: 0 },
            ],
          },
          expires_in: 10,
        }),
      'body.blocks[1].max',
    )
    expect((await s.agent.asks()).asks).toEqual([])
  })
})
