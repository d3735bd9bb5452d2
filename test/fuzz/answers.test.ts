import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { answer, jsonRequest, probe, RUNS } from './fuzz.ts'
import { type FuzzServer, fuzzServer } from './setup.ts'

/**
 * Property-based tests of answers: whatever the person sends to whatever question, the answer
 * is 200 (the question is then answered) or a 4xx JSON error that changed nothing.
 */
let f: FuzzServer
beforeAll(async () => {
  f = await fuzzServer()
})
afterAll(() => f.s.close())

const QUESTIONS: Record<string, unknown>[][] = [
  [{ type: 'choice', id: 'c', options: [{ label: 'A' }, { label: 'B', value: 'b' }] }],
  [
    {
      type: 'choice',
      id: 'c',
      multi: true,
      other: true,
      options: [{ label: 'A' }, { label: 'B' }],
    },
  ],
  [{ type: 'number_input', id: 'n', min: 0, max: 10, required: true }],
  [{ type: 'text_input', id: 't', required: true }],
  [{ type: 'toggle', id: 'flag', label: 'On?' }],
  [{ type: 'confirm', id: 'go', label: 'Go' }],
  [{ type: 'html', id: 'h', html: '<b>x</b>', question: true }],
  [
    { type: 'choice', id: 'c', options: [{ label: 'A' }] },
    { type: 'number_input', id: 'n' },
    { type: 'text_input', id: 't' },
    { type: 'toggle', id: 'flag', label: 'On?' },
  ],
]

test('POST /v1/app/messages/:id/answer: any answer to any question', async () => {
  const statuses = new Set<number>()
  await fc.assert(
    fc.asyncProperty(
      fc.integer({ min: 0, max: QUESTIONS.length - 1 }),
      answer,
      fc.boolean(),
      async (q, value, wrapped) => {
        const sent = await f.s
          .agentClient(f.agent)
          .send({ body: { title: 'q', blocks: QUESTIONS[q] as never } })
        const path = `/v1/app/messages/${sent.message.id}/answer`
        // Mostly `{ answer }`, sometimes the bare value (a common client mistake).
        const payload = wrapped ? { answer: value } : value
        const status = await probe(f.s, jsonRequest(f.person, 'POST', path, payload))
        statuses.add(status)
        const row = await f.s.ctx.store.messages.byId(sent.message.id)
        expect(row?.ask_status).toBe(status === 200 ? 'answered' : 'open')
        if (status === 200) {
          // Answered once: a second answer is 409 and changes nothing.
          expect(await probe(f.s, jsonRequest(f.person, 'POST', path, { answer: value }))).toBe(409)
        }
      },
    ),
    { numRuns: RUNS * 2 },
  )
  expect(statuses.has(200)).toBe(true)
  expect(statuses.has(400)).toBe(true)
})
