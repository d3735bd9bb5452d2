import { afterEach, expect, test } from 'bun:test'
import { type PushFixture, startPushServer } from './fixture.ts'

let f: PushFixture
afterEach(() => f?.close())

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number

test('send → receiver latency over 200 pushes (printed: p50/p99)', async () => {
  f = await startPushServer()
  await f.subscribe('phone')
  const sentAt = new Map<string, number>()
  const N = 200
  for (let i = 0; i < N; i++) {
    const started = performance.now()
    const { message } = await f.s.agent.send({ body: { text: `m${i}` } })
    sentAt.set(message.id, started)
    // One at a time: the latency of one push, not of a queue of 200.
    await f.receiver.waitFor(i + 1)
  }
  const latencies = f.receiver.received
    .map((r) => r.at - (sentAt.get(r.payload.message_id as string) ?? Number.NaN))
    .sort((a, b) => a - b)
  expect(latencies).toHaveLength(N)
  const p50 = percentile(latencies, 50)
  const p99 = percentile(latencies, 99)
  console.log(`push send → receiver: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms (n=${N})`)
  expect(p99).toBeLessThan(500)
})
