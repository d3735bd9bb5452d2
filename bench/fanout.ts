/**
 * Fan-out: `--held` long-polls on one channel (all at the same cursor, `peek=1`, as the shared
 * yardstick's waiters hold them), one send, every poll answered with it. Per round: time from the
 * send to each answer (p50, p99, last) and the server's CPU time for the whole wake (µs per
 * woken poll), the figure a loaded machine changes least.
 *
 *   bun bench/fanout.ts [--held 3000] [--rounds 3] [--bin PATH] [--vs OTHER_BINARY]
 *
 * `--vs` alternates a second build round for round (a fresh server each round), and prints the
 * pair-by-pair ratios. Target (issue 32): p99 ≤ 2× the bare server's + 50 ms at 3,000 and
 * 10,000 polls (the bare figure comes from the shared yardstick's run, not from here).
 */
import { rmSync } from 'node:fs'
import {
  arg,
  argText,
  cpuMs,
  endCursor,
  ensureNofile,
  HARK,
  HOLDING,
  holdPolls,
  pct,
  provision,
  rawRequest,
  startServe,
  tempDataDir,
} from './lib.ts'

const HELD = arg('held', 3000)
const ROUNDS = arg('rounds', 3)
const VS = argText('vs')
const BINS = [argText('bin') ?? HARK, ...(VS ? [VS] : [])]
const NOFILE = 65_536
await ensureNofile(HELD + 1000, NOFILE)

interface Round {
  p50: number
  p99: number
  last: number
  cpuUsPerPoll: number
  /** Server CPU per poll while they were opened and parked (2 s of idle included). */
  parkUs: number
  woke: number
}

async function round(bin: string): Promise<Round> {
  const dir = tempDataDir('hark-fanout-')
  try {
    const { agentTokens } = await provision(dir, 1)
    const authorization = `Bearer ${agentTokens[0]}`
    const server = await startServe(bin.split(' '), dir, HOLDING.flags, {
      nofile: NOFILE,
      env: HOLDING.env,
    })
    try {
      const auth = { authorization }
      const send = (text: string) =>
        rawRequest(
          server.url,
          'POST',
          '/v1/messages',
          { ...auth, 'content-type': 'application/json' },
          JSON.stringify({ body: { text } }),
        )
      for (let i = 0; i < 20; i++) await send(`warm-up ${i}`)
      const cursor = await endCursor(server.url, authorization)
      const cpuPark0 = cpuMs(server.proc.pid)
      const held = await holdPolls(
        server.url,
        `/v1/messages?since=${cursor}&wait=55&peek=1`,
        authorization,
        HELD,
      )
      const polls = held.map((p) => p.answer)
      await Bun.sleep(2000) // let the server take every request in
      const cpu0 = cpuMs(server.proc.pid)
      const parkUs = ((cpu0 - cpuPark0) * 1000) / HELD
      const sent = performance.now()
      const reply = await send('wake everyone')
      const answers = await Promise.all(polls)
      const cpu = cpuMs(server.proc.pid) - cpu0
      const id = (JSON.parse(reply.body) as { message: { id: string } }).message.id
      const after = answers.map((a) => a.at - sent).sort((a, b) => a - b)
      return {
        p50: pct(after, 50),
        p99: pct(after, 99),
        last: after.at(-1) ?? Number.NaN,
        cpuUsPerPoll: (cpu * 1000) / HELD,
        parkUs,
        woke: answers.filter((a) => a.status === 200 && a.body.includes(id)).length,
      }
    } finally {
      await server.stop()
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const results: Round[][] = BINS.map(() => [])
for (let r = 0; r < ROUNDS; r++) {
  for (const [b, bin] of BINS.entries()) (results[b] as Round[]).push(await round(bin))
}
const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  )
for (const [b, bin] of BINS.entries()) {
  const rs = results[b] as Round[]
  console.log(
    `${BINS.length > 1 ? (b === 0 ? 'A: ' : 'B: ') : ''}${bin}: ${HELD} polls, one send, ${ROUNDS} rounds`,
  )
  for (const r of rs) {
    console.log(
      `  woke ${r.woke}/${HELD}  p50 ${r.p50.toFixed(1)} ms  p99 ${r.p99.toFixed(1)} ms  last ${r.last.toFixed(1)} ms  ` +
        `server CPU ${r.cpuUsPerPoll.toFixed(0)} µs per woken poll, ${r.parkUs.toFixed(0)} µs per parked poll`,
    )
  }
}
if (BINS.length > 1) {
  const [a, b] = results as [Round[], Round[]]
  const ratio = (pick: (r: Round) => number) =>
    median(a.map((r, i) => pick(r) / pick(b[i] as Round))).toFixed(2)
  console.log(
    `A/B pair by pair, median: p99 ${ratio((r) => r.p99)}, last ${ratio((r) => r.last)}, ` +
      `server CPU per woken poll ${ratio((r) => r.cpuUsPerPoll)}, per parked poll ${ratio((r) => r.parkUs)}`,
  )
}
