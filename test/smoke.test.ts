import { afterEach, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './harness.ts'

let s: TestServer
afterEach(() => s?.close())

test('send, answer, read', async () => {
  s = await startTestServer()
  const { message } = await s.agent.send({
    body: { text: 'Deploy?', blocks: [{ type: 'confirm', id: 'go', label: 'Deploy' }] },
  })
  expect(message.ask?.status).toBe('open')
  const waiting = s.agent.ask(message.id, 5)
  await s.person.answer(message.id, true)
  const { answer, message: after } = await waiting
  expect(answer).toBe(true)
  expect(after.ask?.status).toBe('answered')
})
