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
import { MAX_HELD_POLLS } from '../src/core/holds.ts'
import {
  arg,
  cpuMs,
  HARK,
  pct,
  provision,
  type RawAnswer,
  raiseNofile,
  rawRequest,
  startListening,
  tempDataDir,
} from './lib.ts'

const HELD = arg('held', 3000)
const ROUNDS = arg('rounds', 3)
const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const BINS = [option('bin') ?? HARK, ...(option('vs') ? [option('vs') as string] : [])]
const NOFILE = 65_536

const limit = Number(Bun.spawnSync(['bash', '-c', 'ulimit -n']).stdout.toString().trim())
if (limit < HELD + 1000 && !process.env.HARK_BENCH_REEXEC) {
  const proc = Bun.spawn(
    [
      'bash',
      '-c',
      `${raiseNofile(NOFILE)} && exec "$@"`,
      'bash',
      process.execPath,
      ...process.argv.slice(1),
    ],
    { env: { ...process.env, HARK_BENCH_REEXEC: '1' }, stdio: ['inherit', 'inherit', 'inherit'] },
  )
  process.exit(await proc.exited)
}

interface Round {
  p50: number
  p99: number
  last: number
  cpuUsPerPoll: number
  woke: number
}

async function round(bin: string): Promise<Round> {
  const dir = tempDataDir('hark-fanout-')
  try {
    const { channelTokens } = await provision(dir, 1, Math.ceil(HELD / MAX_HELD_POLLS))
    const tokens = channelTokens[0] as string[]
    const server = await startListening(
      [
        ...bin.split(' '),
        'serve',
        '--host',
        '127.0.0.1',
        '--port',
        '0',
        '--data',
        dir,
        '--write-limit',
        '0',
      ],
      { nofile: NOFILE },
    )
    try {
      const auth = { authorization: `Bearer ${tokens[0]}` }
      const send = (text: string) =>
        rawRequest(
          server.url,
          'POST',
          '/v1/messages',
          { ...auth, 'content-type': 'application/json' },
          JSON.stringify({ body: { text } }),
        )
      for (let i = 0; i < 20; i++) await send(`warm-up ${i}`)
      const page = await rawRequest(server.url, 'GET', '/v1/messages?since=0&peek=1', auth)
      const cursor = (JSON.parse(page.body) as { cursor: number }).cursor
      const polls: Promise<RawAnswer>[] = []
      for (let i = 0; i < HELD; i++) {
        polls.push(
          rawRequest(server.url, 'GET', `/v1/messages?since=${cursor}&wait=55&peek=1`, {
            authorization: `Bearer ${tokens[i % tokens.length]}`,
          }),
        )
        if (i % 500 === 499) await Bun.sleep(20)
      }
      await Bun.sleep(2000) // let the server take every request in
      const cpu0 = cpuMs(server.proc.pid)
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
        `server CPU ${r.cpuUsPerPoll.toFixed(0)} µs per woken poll`,
    )
  }
}
if (BINS.length > 1) {
  const [a, b] = results as [Round[], Round[]]
  const ratio = (pick: (r: Round) => number) =>
    median(a.map((r, i) => pick(r) / pick(b[i] as Round))).toFixed(2)
  console.log(
    `A/B pair by pair, median: p99 ${ratio((r) => r.p99)}, last ${ratio((r) => r.last)}, ` +
      `server CPU per poll ${ratio((r) => r.cpuUsPerPoll)}`,
  )
}
