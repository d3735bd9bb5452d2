import { afterEach, describe, expect, test } from 'bun:test'
import type { Block } from '../../src/messages/schema.ts'
import { failsWith, sleep, startTestServer, TestClock, type TestServer, until } from '../harness.ts'
import { cursorNow, question, timed } from './fixtures.ts'

let s: TestServer
afterEach(() => s?.close())

const form: Block[] = [
  { type: 'markdown', text: 'Release settings' },
  { type: 'choice', id: 'env', options: [{ label: 'Staging', value: 'stg' }, { label: 'Prod' }] },
  {
    type: 'choice',
    id: 'envDefault',
    default: 'stg',
    options: [{ label: 'Staging', value: 'stg' }, { label: 'Prod' }],
  },
  { type: 'choice', id: 'tags', multi: true, options: [{ label: 'a' }, { label: 'b' }] },
  {
    type: 'choice',
    id: 'tagsDefault',
    multi: true,
    default: ['b', 'a'],
    options: [{ label: 'a' }, { label: 'b' }],
  },
  { type: 'text_input', id: 'note' },
  { type: 'text_input', id: 'noteDefault', default: 'nothing to add' },
  { type: 'number_input', id: 'n' },
  { type: 'number_input', id: 'nDefault', default: 3, min: 0 },
  { type: 'toggle', id: 'flag', label: 'Flag' },
  { type: 'toggle', id: 'flagDefault', label: 'Flag', default: true },
  { type: 'confirm', id: 'sure', label: 'Sure' },
  { type: 'html', id: 'embed', html: '<p>x</p>', question: true },
]

const formDefaults = {
  env: null,
  envDefault: 'stg',
  tags: [],
  tagsDefault: ['b', 'a'],
  note: null,
  noteDefault: 'nothing to add',
  n: null,
  nDefault: 3,
  flag: false,
  flagDefault: true,
  sure: null,
  embed: null,
}

describe('expires_in', () => {
  test('a fractional expires_in expires on time with the defaults', async () => {
    s = await startTestServer()
    const message = await question(s, form, { expires_in: 0.3 })
    expect(message.ask?.expires_at).toBe(message.created_at + 300)
    expect((await s.agent.ask(message.id)).message.ask?.status).toBe('open')
    await sleep(700)
    const read = await s.agent.ask(message.id)
    expect(read.message.ask?.status).toBe('expired')
    expect(read.message.ask?.answered_at).toBeUndefined()
    expect(read.message.ask?.expires_at).toBe(message.ask?.expires_at as number)
    expect(read.message.ask?.answer).toEqual(formDefaults)
    expect(read.answer).toEqual(formDefaults)
    // The scheduler did it: the row changed without anyone reading it first.
    expect((await s.ctx.store.messages.byId(message.id))?.ask_status).toBe('expired')
  })

  test('one input expires to its default, else its empty value', async () => {
    s = await startTestServer()
    const cases: [Block, unknown][] = [
      [{ type: 'choice', id: 'c', options: [{ label: 'x' }], default: 'x' }, 'x'],
      [{ type: 'choice', id: 'c', options: [{ label: 'x' }] }, null],
      [{ type: 'choice', id: 'c', options: [{ label: 'x' }], multi: true }, []],
      [
        { type: 'choice', id: 'c', options: [{ label: 'x' }], other: true, default: 'typed' },
        'typed',
      ],
      [{ type: 'text_input', id: 't', default: '' }, ''],
      [{ type: 'text_input', id: 't' }, null],
      [{ type: 'number_input', id: 'n', default: 0 }, 0],
      [{ type: 'toggle', id: 't', label: 'T' }, false],
      [{ type: 'toggle', id: 't', label: 'T', default: false }, false],
      [{ type: 'confirm', id: 'c', label: 'C' }, null],
      [{ type: 'html', id: 'h', html: 'x', question: true }, null],
    ]
    const sent = []
    for (const [block] of cases) sent.push(await question(s, [block], { expires_in: 0.1 }))
    await sleep(500)
    for (const [i, [, expected]] of cases.entries()) {
      const read = await s.agent.ask((sent[i] as { id: string }).id)
      expect(read.message.ask?.status).toBe('expired')
      expect(read.answer).toEqual(expected)
    }
  })

  test('a long-poll on the question wakes on expiry', async () => {
    s = await startTestServer()
    const message = await question(s, [{ type: 'toggle', id: 't', label: 'T', default: true }], {
      expires_in: 0.3,
    })
    const { value, ms } = await timed(s.agent.ask(message.id, 5))
    expect(value.message.ask?.status).toBe('expired')
    expect(value.answer).toBe(true)
    expect(ms).toBeLessThan(3000)
  })

  test('the change feed wakes on expiry and shows the expired question', async () => {
    s = await startTestServer()
    const message = await question(s, [{ type: 'text_input', id: 't' }], { expires_in: 0.3 })
    const cursor = await cursorNow(s)
    const { value, ms } = await timed(s.agent.feed({ since: cursor, wait: 5 }))
    expect(ms).toBeLessThan(3000)
    expect(value.messages).toHaveLength(1)
    expect(value.messages[0]).toMatchObject({ id: message.id, ask: { status: 'expired' } })
    expect(value.cursor).toBeGreaterThan(cursor)
  })

  test('an expired question is no longer listed, and cannot be answered or cancelled', async () => {
    s = await startTestServer()
    const stays = await question(s, [{ type: 'toggle', id: 't', label: 'T' }], { expires_in: 60 })
    const goes = await question(s, [{ type: 'toggle', id: 't', label: 'T' }], { expires_in: 0.1 })
    await s.agent.ask(goes.id, 5)
    expect((await s.agent.asks()).asks.map((m) => m.id)).toEqual([stays.id])
    await failsWith(s.person.answer(goes.id, true), 409)
    await failsWith(s.agent.cancel(goes.id), 409)
    expect((await s.agent.ask(goes.id)).answer).toBe(false)
  })

  test('an earlier expiry sent after a later one still expires on time', async () => {
    s = await startTestServer()
    const late = await question(s, [{ type: 'toggle', id: 't', label: 'T' }], { expires_in: 0.8 })
    const early = await question(s, [{ type: 'toggle', id: 't', label: 'T' }], {
      expires_in: 0.2,
    })
    const first = await s.agent.ask(early.id, 5)
    expect(first.message.ask?.status).toBe('expired')
    expect((await s.agent.ask(late.id)).message.ask?.status).toBe('open')
    // ...and the scheduler re-arms for the later one.
    const second = await s.agent.ask(late.id, 5)
    expect(second.message.ask?.status).toBe('expired')
  })

  test('many questions due at once all expire', async () => {
    s = await startTestServer()
    const sent = []
    for (let i = 0; i < 30; i++) {
      sent.push(await question(s, [{ type: 'text_input', id: 't' }], { expires_in: 0.2 }))
    }
    await sleep(600)
    expect((await s.agent.asks()).asks).toEqual([])
    for (const m of sent) {
      expect((await s.ctx.store.messages.byId(m.id))?.ask_status).toBe('expired')
    }
  })

  test('an answer before expiry stands', async () => {
    s = await startTestServer()
    const message = await question(s, [{ type: 'text_input', id: 't', default: 'd' }], {
      expires_in: 0.2,
    })
    await s.person.answer(message.id, 'mine')
    await sleep(500)
    const read = await s.agent.ask(message.id)
    expect(read.message.ask?.status).toBe('answered')
    expect(read.answer).toBe('mine')
  })

  test('a cancel before expiry stands', async () => {
    s = await startTestServer()
    const message = await question(s, [{ type: 'text_input', id: 't', default: 'd' }], {
      expires_in: 0.2,
    })
    await s.agent.cancel(message.id)
    await sleep(500)
    const read = await s.agent.ask(message.id)
    expect(read.message.ask?.status).toBe('cancelled')
    expect(read.answer).toBeNull()
  })

  test('a deleted question with an expiry does not disturb the scheduler', async () => {
    s = await startTestServer()
    const gone = await question(s, [{ type: 'toggle', id: 't', label: 'T' }], { expires_in: 0.1 })
    const kept = await question(s, [{ type: 'toggle', id: 't', label: 'T' }], { expires_in: 0.3 })
    await s.agent.remove(gone.id)
    expect((await s.agent.ask(kept.id, 5)).message.ask?.status).toBe('expired')
    await failsWith(s.agent.ask(gone.id), 404)
  })
})

describe('expires_in validation', () => {
  test('must be a positive number of seconds, at most 30 days, on a question', async () => {
    s = await startTestServer()
    const blocks: Block[] = [{ type: 'confirm', id: 'c', label: 'C' }]
    for (const bad of [0, -1, 30 * 24 * 3600 + 1, '10', null]) {
      const e = await failsWith(s.agent.send({ body: { blocks }, expires_in: bad as number }), 400)
      expect(e.field).toBe('expires_in')
    }
    const plain = await failsWith(s.agent.send({ body: { text: 'hi' }, expires_in: 10 }), 400)
    expect(plain.field).toBe('expires_in')
    expect((await s.agent.asks()).asks).toEqual([])
    const max = await question(s, blocks, { expires_in: 30 * 24 * 3600 })
    expect(max.ask?.expires_at).toBe(max.created_at + 30 * 24 * 3600 * 1000)
  })
})

describe('expiry across restarts and clocks', () => {
  test('a question that fell due while the server was down expires at the next start', async () => {
    s = await startTestServer()
    const message = await question(s, form, { expires_in: 0.2 })
    // "Down": nothing runs the scheduler until the restart.
    s.ctx.expiry.stop()
    await sleep(400)
    expect((await s.ctx.store.messages.byId(message.id))?.ask_status).toBe('open')
    await s.restart()
    expect((await s.ctx.store.messages.byId(message.id))?.ask_status).toBe('expired')
    const read = await s.agent.ask(message.id)
    expect(read.message.ask?.status).toBe('expired')
    expect(read.answer).toEqual(formDefaults)
  })

  test('a pending expiry is re-armed after a restart', async () => {
    s = await startTestServer()
    const message = await question(s, [{ type: 'number_input', id: 'n', default: 7 }], {
      expires_in: 0.5,
    })
    await s.restart()
    const read = await s.agent.ask(message.id, 5)
    expect(read.message.ask?.status).toBe('expired')
    expect(read.answer).toBe(7)
  })

  test('an overdue question is expired when read, before the timer fires', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const message = await question(s, [{ type: 'text_input', id: 't', default: 'late' }], {
      expires_in: 3600,
    })
    const other = await question(s, [{ type: 'text_input', id: 't' }], { expires_in: 3600 })
    clock.advance(2 * 3600 * 1000)
    const read = await s.agent.ask(message.id)
    expect(read.message.ask?.status).toBe('expired')
    expect(read.answer).toBe('late')
    expect((await s.agent.asks()).asks).toEqual([])
    await failsWith(s.person.answer(other.id, 'x'), 409)
    expect((await s.agent.ask(other.id)).answer).toBeNull()
  })

  test('a long-poll held past the expiry returns the expired question', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const message = await question(s, [{ type: 'toggle', id: 't', label: 'T' }], {
      expires_in: 3600,
    })
    const poll = s.agent.ask(message.id, 0.3)
    await until(() => s.ctx.waiters.size === 1)
    clock.advance(2 * 3600 * 1000)
    const read = await poll
    expect(read.message.ask?.status).toBe('expired')
    expect(read.answer).toBe(false)
  })
})
