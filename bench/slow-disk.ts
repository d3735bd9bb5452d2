/**
 * What a slow disk does to everyone else: `dist/hark serve` under strace, every fsync and
 * fdatasync of every thread held `--delay` ms before it runs (an SD card's or a network disk's
 * sync, simulated on any machine: strace's syscall delay injection, no privilege needed).
 * Meanwhile `--senders` agents each send a message every `--every` ms (one: each send a lone
 * write after a quiet spell), another client asks `GET /health` every 5 ms and a third reads the feed: their latency
 * shows whether the server stops serving while the disk syncs.
 *
 *   bun bench/slow-disk.ts [--delay 20] [--every 50] [--senders 1] [--seconds 8] [--rounds 2] [--vs OTHER_BINARY]
 *
 * `--vs` alternates another build, round by round. Needs dist/hark (`bun run build`) and strace.
 * Target: a send waits for the disk; `/health` and reads do not (p99 well under `--delay`).
 */
import { rmSync } from 'node:fs'
import { holdingSyncs } from '../test/binary/strace.ts'
import {
  arg,
  argText,
  HARK,
  ms,
  pct,
  provision,
  requireBinary,
  startServe,
  stopTraced,
  tempDataDir,
} from './lib.ts'

const DELAY = arg('delay', 20)
const EVERY = arg('every', 50)
const SENDERS = arg('senders', 1)
const SECONDS = arg('seconds', 8)
const ROUNDS = arg('rounds', 2)
const VS = argText('vs')

const payload = JSON.stringify({ body: { title: 'Build #42', text: 'All green' } })
const strace = ['strace', '-f', '-qq', '--seccomp-bpf', '-o', '/dev/null', ...holdingSyncs(DELAY)]

interface Figures {
  sends: number[]
  health: number[]
  reads: number[]
}

/** Calls `once` every `every` ms until `until`, recording each call's latency. */
async function every(until: number, everyMs: number, once: () => Promise<void>, into: number[]) {
  while (performance.now() < until) {
    const started = performance.now()
    await once()
    into.push(performance.now() - started)
    const left = everyMs - (performance.now() - started)
    if (left > 0) await Bun.sleep(left)
  }
}

async function ok(response: Response, what: string): Promise<void> {
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`${what} answered ${response.status}`)
}

async function round(bin: string): Promise<Figures> {
  const dir = tempDataDir('hark-slow-disk-')
  try {
    const { agentTokens } = await provision(dir, 2)
    const [sender, reader] = agentTokens as [string, string]
    const server = await startServe([...strace, bin], dir, ['--write-limit', '0'])
    try {
      const send = () =>
        fetch(`${server.url}/v1/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sender}`, 'content-type': 'application/json' },
          body: payload,
        }).then((r) => ok(r, 'send'))
      const health = () => fetch(`${server.url}/health`).then((r) => ok(r, '/health'))
      const read = () =>
        fetch(`${server.url}/v1/messages?peek=1`, {
          headers: { authorization: `Bearer ${reader}` },
        }).then((r) => ok(r, 'feed read'))
      for (let i = 0; i < 5; i++) await Promise.all([send(), health(), read()])
      const figures: Figures = { sends: [], health: [], reads: [] }
      const until = performance.now() + SECONDS * 1000
      await Promise.all([
        ...Array.from({ length: SENDERS }, () => every(until, EVERY, send, figures.sends)),
        every(until, 5, health, figures.health),
        every(until, 7, read, figures.reads),
      ])
      return figures
    } finally {
      await stopTraced(server.proc)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

function line(name: string, values: number[]): string {
  const sorted = [...values].sort((a, b) => a - b)
  const over = sorted.filter((v) => v > DELAY / 2).length
  return (
    `${name} ${sorted.length}: p50 ${ms(pct(sorted, 50))}, p99 ${ms(pct(sorted, 99))}, ` +
    `max ${ms(sorted.at(-1) ?? Number.NaN)}, over ${DELAY / 2} ms ${over}`
  )
}

requireBinary()
const builds = VS ? [HARK, VS] : [HARK]
console.log(
  `every fsync/fdatasync held ${DELAY} ms; ${SENDERS} sender(s), each a send every ${EVERY} ms, /health every 5 ms, ` +
    `a feed read every 7 ms, ${SECONDS} s a round`,
)
for (let r = 1; r <= ROUNDS; r++) {
  for (const bin of builds) {
    const f = await round(bin)
    console.log(`round ${r} ${bin}`)
    console.log(`  ${line('sends', f.sends)}`)
    console.log(`  ${line('/health', f.health)}`)
    console.log(`  ${line('feed reads', f.reads)}`)
  }
}
