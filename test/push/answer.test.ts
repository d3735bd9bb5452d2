import { afterEach, describe, expect, test } from 'bun:test'
import { hashToken } from '../../src/core/ids.ts'
import { TestClock } from '../harness.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

let f: PushFixture
afterEach(() => f?.close())

const answerRaw = (fx: PushFixture, json: unknown) =>
  fx.s.raw().raw('POST', '/v1/push/answer', { json })

async function askAndReceive(fx: PushFixture, blocks: unknown[], devices = 1) {
  const { message } = await fx.s.agent.send({ body: { text: 'Deploy?', blocks } as never })
  const got = await fx.receiver.waitFor(devices)
  return { message, got }
}

describe('answering from the notification', () => {
  test('a two-option choice carries actions and a capability that answers exactly once', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const { message, got } = await askAndReceive(f, [
      { type: 'choice', id: 'c', options: [{ label: 'Ship it', value: 'yes' }, { label: 'No' }] },
    ])
    const payload = got[0]?.payload as { actions: unknown[]; capability: string }
    expect(payload.actions).toEqual([
      { action: 'a0', title: 'Ship it', answer: 'yes' },
      { action: 'a1', title: 'No', answer: 'No' },
    ])
    expect(payload.capability).toMatch(/^hark_cap_[A-Za-z0-9]{43}$/)
    // Only its hash is stored.
    const stored = f.s.ctx.db
      .query<{ n: number }, [Uint8Array]>(
        'SELECT count(*) AS n FROM push_capabilities WHERE hash = ?1',
      )
      .get(hashToken(payload.capability))
    expect(stored?.n).toBe(1)
    const ok = await answerRaw(f, { capability: payload.capability, answer: 'yes' })
    expect(ok.status).toBe(200)
    const body = (await ok.json()) as { answer: unknown; message: { ask: { status: string } } }
    expect(body.answer).toBe('yes')
    expect(body.message.ask.status).toBe('answered')
    expect((await f.s.agent.ask(message.id)).answer).toBe('yes')
    // Replay: the capability died with the answer.
    const replay = await answerRaw(f, { capability: payload.capability, answer: 'No' })
    expect(replay.status).toBe(403)
    expect((await f.s.agent.ask(message.id)).answer).toBe('yes')
  })

  test('a confirm carries one action; an invalid answer is 400 and leaves the capability alive', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const { got } = await askAndReceive(f, [{ type: 'confirm', id: 'go', label: 'Deploy now' }])
    const payload = got[0]?.payload as { actions: unknown[]; capability: string }
    expect(payload.actions).toEqual([{ action: 'a0', title: 'Deploy now', answer: true }])
    expect((await answerRaw(f, { capability: payload.capability, answer: false })).status).toBe(400)
    expect((await answerRaw(f, { capability: payload.capability, answer: true })).status).toBe(200)
  })

  test('each device gets its own capability; once one answers, the others fail', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    await f.subscribe('laptop')
    const { got } = await askAndReceive(f, [{ type: 'confirm', id: 'go', label: 'Go' }], 2)
    const [a, b] = got.map((r) => (r.payload as { capability: string }).capability)
    expect(a).not.toBe(b)
    expect((await answerRaw(f, { capability: a, answer: true })).status).toBe(200)
    expect((await answerRaw(f, { capability: b, answer: true })).status).toBe(403)
  })

  test('a question answered in the app meanwhile: 409, and the capability is spent', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const { message, got } = await askAndReceive(f, [{ type: 'confirm', id: 'go', label: 'Go' }])
    await f.s.agent.cancel(message.id)
    const capability = (got[0]?.payload as { capability: string } | undefined)?.capability ?? ''
    expect((await answerRaw(f, { capability, answer: true })).status).toBe(409)
    expect((await answerRaw(f, { capability, answer: true })).status).toBe(403)
  })

  test('an expired capability fails', async () => {
    const clock = new TestClock()
    f = await startPushServer({ clock })
    await f.subscribe('phone')
    const { got } = await askAndReceive(f, [{ type: 'confirm', id: 'go', label: 'Go' }])
    const capability = (got[0]?.payload as { capability: string } | undefined)?.capability ?? ''
    clock.advance(24 * 3600_000 + 1)
    expect((await answerRaw(f, { capability, answer: true })).status).toBe(403)
  })

  test('questions that need more than a tap carry no actions and no capability', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const shapes = [
      [{ type: 'choice', id: 'c', options: [{ label: 'a' }, { label: 'b' }, { label: 'c' }] }],
      [{ type: 'choice', id: 'c', multi: true, options: [{ label: 'a' }, { label: 'b' }] }],
      [{ type: 'text_input', id: 't', label: 'Why?' }],
      [
        { type: 'confirm', id: 'x', label: 'A' },
        { type: 'confirm', id: 'y', label: 'B' },
      ],
    ]
    for (const blocks of shapes) await f.s.agent.send({ body: { blocks } as never })
    const got = await f.receiver.waitFor(shapes.length)
    for (const r of got) {
      expect(r.payload.actions).toBeUndefined()
      expect(r.payload.capability).toBeUndefined()
    }
  })

  test('unknown capability and bad bodies', async () => {
    f = await startPushServer()
    expect((await answerRaw(f, { capability: 'hark_cap_nope', answer: true })).status).toBe(403)
    expect((await answerRaw(f, { answer: true })).status).toBe(400)
    const malformed = await f.s.raw().raw('POST', '/v1/push/answer', {
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(malformed.status).toBe(400)
    // Not declared as JSON at all: 415 (src/server/json-body.ts).
    expect((await f.s.raw().raw('POST', '/v1/push/answer', { body: '{nope' })).status).toBe(415)
  })
})
