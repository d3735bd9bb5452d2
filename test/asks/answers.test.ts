import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import type { Block } from '../../src/messages/schema.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'
import { cursorNow, question } from './fixtures.ts'

let s: TestServer
beforeEach(async () => {
  s = await startTestServer()
})
afterEach(() => s.close())

const colour: Block = {
  type: 'choice',
  id: 'colour',
  options: [{ label: 'Red', value: 'r' }, { label: 'Green' }, { label: 'Blue', value: 'b' }],
}

/** Sends a question and answers it; returns what the person's answer call returned. */
async function answered(blocks: Block[], value: unknown) {
  const message = await question(s, blocks)
  return s.person.answer(message.id, value)
}

/** Answers with `value` and expects a 400 naming `field`. */
async function rejected(blocks: Block[], value: unknown, field: string) {
  const message = await question(s, blocks)
  const error = await failsWith(s.person.answer(message.id, value), 400)
  expect(error.field).toBe(field)
  expect(typeof error.error).toBe('string')
  return message
}

describe('answer shapes: one input answers with its value', () => {
  test('choice: the option value, else its label', async () => {
    expect((await answered([colour], 'r')).answer).toBe('r')
    expect((await answered([colour], 'Green')).answer).toBe('Green')
  })

  test('choice by label when the option has a value is rejected', async () => {
    await rejected([colour], 'Red', 'answer')
  })

  test('multi choice: an array in the order picked', async () => {
    const multi = { ...colour, multi: true }
    expect((await answered([multi], ['b', 'r'])).answer).toEqual(['b', 'r'])
    expect((await answered([multi], ['Green'])).answer).toEqual(['Green'])
    expect((await answered([multi], [])).answer).toEqual([])
  })

  test('choice with other: a typed string besides the options', async () => {
    const other = { ...colour, other: true }
    expect((await answered([other], 'Mauve')).answer).toBe('Mauve')
    expect((await answered([other], 'r')).answer).toBe('r')
    const multiOther = { ...colour, other: true, multi: true }
    expect((await answered([multiOther], ['r', 'Teal'])).answer).toEqual(['r', 'Teal'])
  })

  test('text_input: a string (multiline keeps newlines)', async () => {
    const text: Block = { type: 'text_input', id: 'why', multiline: true }
    expect((await answered([text], 'line 1\nline 2')).answer).toBe('line 1\nline 2')
    expect((await answered([text], '')).answer).toBe('')
  })

  test('number_input: a number, min and max inclusive', async () => {
    const n: Block = { type: 'number_input', id: 'n', min: 1, max: 10 }
    expect((await answered([n], 1)).answer).toBe(1)
    expect((await answered([n], 10)).answer).toBe(10)
    expect((await answered([n], 2.5)).answer).toBe(2.5)
    expect((await answered([{ type: 'number_input', id: 'n' }], -1e6)).answer).toBe(-1e6)
  })

  test('toggle: a boolean', async () => {
    const t: Block = { type: 'toggle', id: 't', label: 'Verbose' }
    expect((await answered([t], true)).answer).toBe(true)
    expect((await answered([t], false)).answer).toBe(false)
  })

  test('confirm: true', async () => {
    const c: Block = { type: 'confirm', id: 'go', label: 'Deploy', danger: true }
    expect((await answered([c], true)).answer).toBe(true)
  })

  test('html question: any JSON value passed to reply()', async () => {
    const html: Block = { type: 'html', id: 'pick', html: '<p>hi</p>', question: true }
    for (const value of [{ x: 1, nested: [true, null] }, [1, 'two'], 42, 'text', false]) {
      expect((await answered([html], value)).answer).toEqual(value)
    }
  })

  test('display blocks around a single input do not change the shape', async () => {
    const blocks: Block[] = [
      { type: 'markdown', id: 'intro', text: 'Pick one' },
      colour,
      { type: 'future_block', id: 'x' },
      { type: 'html', id: 'embed', html: '<b>not a question</b>' },
    ]
    expect((await answered(blocks, 'b')).answer).toBe('b')
  })
})

describe('answer shapes: several inputs answer with an object keyed by block id', () => {
  const form: Block[] = [
    colour,
    { type: 'choice', id: 'tags', multi: true, options: [{ label: 'a' }, { label: 'b' }] },
    { type: 'text_input', id: 'note' },
    { type: 'number_input', id: 'count', min: 0 },
    { type: 'toggle', id: 'force', label: 'Force' },
    { type: 'confirm', id: 'sure', label: 'Sure' },
    { type: 'html', id: 'widget', html: '<i>w</i>', question: true },
  ]

  test('every input given', async () => {
    const value = {
      colour: 'b',
      tags: ['b', 'a'],
      note: 'ok',
      count: 3,
      force: true,
      sure: true,
      widget: { picked: [1, 2] },
    }
    const { answer, message } = await answered(form, value)
    expect(answer).toEqual(value)
    expect(message.ask?.answer).toEqual(value)
  })

  test('optional inputs left out: null, toggle false, multi []', async () => {
    const { answer } = await answered(form, { widget: 'w' })
    expect(answer).toEqual({
      colour: null,
      tags: [],
      note: null,
      count: null,
      force: false,
      sure: null,
      widget: 'w',
    })
  })

  test('explicit nulls count as left out', async () => {
    const blocks: Block[] = [
      { type: 'text_input', id: 'a' },
      { type: 'toggle', id: 'b', label: 'B' },
    ]
    expect((await answered(blocks, { a: null, b: null })).answer).toEqual({ a: null, b: false })
  })

  test('block ids that name Object.prototype members are plain keys', async () => {
    const blocks: Block[] = [
      { type: 'text_input', id: 'constructor' },
      { type: 'toggle', id: 'toString', label: 'T' },
      { type: 'text_input', id: '__proto__' },
    ]
    // Entries, not property reads: `answer.toString` would find Object.prototype's otherwise.
    const left = (await answered(blocks, {})).answer as object
    expect(Object.entries(left)).toEqual([
      ['constructor', null],
      ['toString', false],
      ['__proto__', null],
    ])
    const given = JSON.parse('{"__proto__":"kept","toString":true}')
    const { answer } = await answered(blocks, given)
    expect(Object.entries(answer as object)).toEqual([
      ['constructor', null],
      ['toString', true],
      ['__proto__', 'kept'],
    ])
  })
})

describe('invalid answers are 400 naming the field', () => {
  test('no answer at all', async () => {
    const message = await question(s, [colour])
    const error = await failsWith(s.person.answer(message.id, undefined), 400)
    expect(error.field).toBe('answer')
  })

  test('choice: unknown option, not a string, nothing picked', async () => {
    await rejected([colour], 'purple', 'answer')
    await rejected([colour], 1, 'answer')
    await rejected([colour], ['r'], 'answer')
    await rejected([colour], null, 'answer')
    await rejected([{ ...colour, other: true }], '   ', 'answer')
  })

  test('multi: given a string, an unknown or non-string element, a repeat, none when required', async () => {
    const multi = { ...colour, multi: true }
    await rejected([multi], 'r', 'answer')
    await rejected([multi], ['r', 'purple'], 'answer[1]')
    await rejected([multi], [7], 'answer[0]')
    await rejected([multi], ['r', 'b', 'r'], 'answer')
    await rejected([{ ...multi, required: true }], [], 'answer')
    await rejected([{ ...multi, required: true }], null, 'answer')
  })

  test('text_input: not a string, empty when required', async () => {
    await rejected([{ type: 'text_input', id: 't' }], 5, 'answer')
    await rejected([{ type: 'text_input', id: 't' }], { text: 'x' }, 'answer')
    await rejected([{ type: 'text_input', id: 't', required: true }], '', 'answer')
    await rejected([{ type: 'text_input', id: 't', required: true }], null, 'answer')
  })

  test('number_input: out of range, not a number, missing when required', async () => {
    const n: Block = { type: 'number_input', id: 'n', min: 1, max: 10 }
    await rejected([n], 0, 'answer')
    await rejected([n], 10.5, 'answer')
    await rejected([n], '5', 'answer')
    await rejected([n], true, 'answer')
    await rejected([{ ...n, required: true }], null, 'answer')
  })

  test('toggle and confirm: wrong types', async () => {
    await rejected([{ type: 'toggle', id: 't', label: 'T' }], 'true', 'answer')
    await rejected([{ type: 'toggle', id: 't', label: 'T' }], 1, 'answer')
    await rejected([{ type: 'confirm', id: 'c', label: 'C' }], false, 'answer')
    await rejected([{ type: 'confirm', id: 'c', label: 'C' }], 'yes', 'answer')
    await rejected([{ type: 'confirm', id: 'c', label: 'C' }], null, 'answer')
  })

  test('several inputs: not an object, unknown key, missing required, wrong type', async () => {
    const blocks: Block[] = [
      { ...colour, required: true },
      { type: 'number_input', id: 'count', max: 5 },
      { type: 'choice', id: 'tags', multi: true, options: [{ label: 'a' }, { label: 'b' }] },
      { type: 'confirm', id: 'sure', label: 'Sure' },
    ]
    await rejected(blocks, 'r', 'answer')
    await rejected(blocks, ['r'], 'answer')
    await rejected(blocks, null, 'answer')
    await rejected(blocks, { colour: 'r', extra: 1 }, 'answer.extra')
    await rejected(blocks, { count: 1 }, 'answer.colour')
    await rejected(blocks, { colour: 'r', count: 'many' }, 'answer.count')
    await rejected(blocks, { colour: 'r', count: 6 }, 'answer.count')
    await rejected(blocks, { colour: 'r', tags: 'a' }, 'answer.tags')
    await rejected(blocks, { colour: 'r', tags: ['a', 'zz'] }, 'answer.tags[1]')
    await rejected(blocks, { colour: 'r', sure: false }, 'answer.sure')
  })

  test('an answer over the size limit', async () => {
    await rejected([{ type: 'text_input', id: 't' }], 'x'.repeat(70 * 1024), 'answer')
  })

  test('a body that is not JSON is 400', async () => {
    const message = await question(s, [colour])
    const res = await s.person.raw('POST', `/v1/app/messages/${message.id}/answer`, {
      body: '{"answer":',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toBeString()
  })

  test('a rejected answer leaves the question open and unchanged', async () => {
    const blocks: Block[] = [{ type: 'number_input', id: 'n', min: 1, max: 3, required: true }]
    const message = await question(s, blocks)
    const cursor = await cursorNow(s)
    for (const bad of [0, 4, 'two', null, { n: 1 }]) {
      await failsWith(s.person.answer(message.id, bad), 400)
    }
    const read = await s.agent.ask(message.id)
    expect(read.answer).toBeNull()
    expect(read.message).toEqual(message)
    expect((await s.agent.asks()).asks.map((m) => m.id)).toEqual([message.id])
    expect(await s.agent.feed({ since: cursor, peek: true })).toEqual({
      messages: [],
      cursor,
      has_more: false,
    })
    // ...and a valid answer still goes through.
    expect((await s.person.answer(message.id, 2)).answer).toBe(2)
  })
})

describe('where the answer shows', () => {
  test('answer response, GET /v1/asks/:id and the change feed agree', async () => {
    const message = await question(s, [{ type: 'text_input', id: 'why' }])
    const cursor = await cursorNow(s)
    const res = await s.person.answer(message.id, 'because')
    expect(res.answer).toBe('because')
    expect(res.message.id).toBe(message.id)
    expect(res.message.ask?.status).toBe('answered')
    expect(res.message.ask?.answer).toBe('because')
    expect(res.message.ask?.answered_at).toBeNumber()
    expect(res.message.ask?.answered_at).toBeGreaterThanOrEqual(message.created_at)
    expect(await s.agent.ask(message.id)).toEqual(res)
    const feed = await s.agent.feed({ since: cursor })
    expect(feed.messages).toEqual([res.message])
    const personFeed = await s.person.feed(s.channelId, { since: cursor })
    expect(personFeed.messages).toEqual([res.message])
  })

  test('two answers at once: one wins, the other is 409', async () => {
    const message = await question(s, [colour])
    const results = await Promise.allSettled([
      s.person.answer(message.id, 'r'),
      s.person.answer(message.id, 'b'),
    ])
    const ok = results.filter((r) => r.status === 'fulfilled')
    const failed = results.filter((r) => r.status === 'rejected')
    expect(ok).toHaveLength(1)
    expect(failed).toHaveLength(1)
    expect((failed[0] as PromiseRejectedResult).reason.status).toBe(409)
    const winner = (ok[0] as PromiseFulfilledResult<{ answer: unknown }>).value.answer
    expect((await s.agent.ask(message.id)).answer).toBe(winner as string)
  })
})
