/**
 * Push latency: from an agent's send to the (decrypted) push arriving at a local push service,
 * one push at a time, through the real queue, worker, web-push encryption and HTTP.
 *
 *   bun bench/push.ts [N=200] [devices=1]
 */
import { type PushFixture, startPushServer } from '../test/push/fixture.ts'

const N = Number(process.argv[2] ?? 200)
const DEVICES = Number(process.argv[3] ?? 1)

const f: PushFixture = await startPushServer()
for (let d = 0; d < DEVICES; d++) await f.subscribe(`device-${d}`)
const sentAt = new Map<string, number>()
const sendTimes: number[] = []
for (let i = 0; i < N; i++) {
  const started = performance.now()
  const { message } = await f.s.agent.send({ body: { text: `bench ${i}` } })
  sendTimes.push(performance.now() - started)
  sentAt.set(message.id, started)
  await f.receiver.waitFor((i + 1) * DEVICES, 10_000)
}
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return (s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] as number).toFixed(2)
}
const latencies = f.receiver.received.map(
  (r) => r.at - (sentAt.get(r.payload.message_id as string) ?? Number.NaN),
)
console.log(`${N} sends × ${DEVICES} device(s)`)
console.log(
  `send request (enqueue only): p50 ${pct(sendTimes, 50)} ms, p99 ${pct(sendTimes, 99)} ms`,
)
console.log(
  `send → push received:        p50 ${pct(latencies, 50)} ms, p99 ${pct(latencies, 99)} ms`,
)
f.close()
