/**
 * What one acknowledged write costs the disk, and what a lone write waits: `dist/hark serve`
 * under strace, counting every fsync and fdatasync of its threads (SQLite's own commits and
 * checkpoints, and the write path's flushes alike), while 32 senders send; then, without
 * strace, single sends one after another on an idle server.
 *
 *   bun bench/fsyncs.ts [--writes 4000] [--concurrency 32] [--idle 300]
 *
 * Needs dist/hark (`bun run build`) and strace. Targets (issue 17): ≤ 50 fsyncs per 1,000
 * writes at 32 senders; idle single-send p50 no worse than before group commit.
 */
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  arg,
  HARK,
  ms,
  pct,
  provision,
  requireBinary,
  startListening,
  stopTraced,
  tempDataDir,
} from './lib.ts'

const WRITES = arg('writes', 4000)
const CONCURRENCY = arg('concurrency', 32)
const IDLE = arg('idle', 300)

const payload = JSON.stringify({ body: { title: 'Build #42', text: 'All green' } })

function send(url: string, token: string): Promise<Response> {
  return fetch(`${url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: payload,
  })
}

/** Sends `total` messages from `concurrency` workers; answers how many were acknowledged. */
async function load(url: string, tokens: string[], total: number): Promise<number> {
  let next = 0
  let acknowledged = 0
  const worker = async (w: number) => {
    while (next < total) {
      next++
      const response = await send(url, tokens[w % tokens.length] as string)
      await response.arrayBuffer()
      if (response.status === 200) acknowledged++
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)))
  return acknowledged
}

/** strace's `-c` summary: calls per syscall name. */
function syscallCounts(summary: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const line of summary.split('\n')) {
    const m = /^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$/.exec(line)
    if (m) counts.set(m[2] as string, Number(m[1]))
  }
  return counts
}

if (!process.env.HARK_BENCH_CMD) requireBinary()
const dir = tempDataDir('hark-fsyncs-')
try {
  const { agentTokens } = await provision(dir, 64)
  const trace = join(dir, 'strace.txt')
  // HARK_BENCH_CMD: another build to compare (e.g. the one before group commit).
  const bin = process.env.HARK_BENCH_CMD?.split(' ').filter(Boolean) ?? [HARK]
  const serve = [...bin, 'serve', '--host', '127.0.0.1', '--port', '0', '--data', dir]
  const limits = ['--write-limit', '0']

  // 1. fsyncs per 1,000 writes under load. --seccomp-bpf stops the process only at the two
  // syscalls counted, so strace barely slows the server.
  const traced = await startListening([
    'strace',
    '-f',
    '-qq',
    '--seccomp-bpf',
    '-c',
    '-e',
    'trace=fsync,fdatasync',
    '-o',
    trace,
    ...serve,
    ...limits,
  ])
  await load(traced.url, agentTokens, 200) // warm-up: its fsyncs are counted below, then taken off
  await stopTraced(traced.proc)
  const warm = syscallCounts(readFileSync(trace, 'utf8'))
  const warmSyncs = (warm.get('fsync') ?? 0) + (warm.get('fdatasync') ?? 0)

  const again = await startListening([
    'strace',
    '-f',
    '-qq',
    '--seccomp-bpf',
    '-c',
    '-e',
    'trace=fsync,fdatasync',
    '-o',
    trace,
    ...serve,
    ...limits,
  ])
  await load(again.url, agentTokens, 200)
  const started = performance.now()
  const acknowledged = await load(again.url, agentTokens, WRITES)
  const seconds = (performance.now() - started) / 1000
  await stopTraced(again.proc)
  const counts = syscallCounts(readFileSync(trace, 'utf8'))
  const syncs = (counts.get('fsync') ?? 0) + (counts.get('fdatasync') ?? 0) - warmSyncs
  console.log(
    `${acknowledged} writes acknowledged by ${CONCURRENCY} senders in ${seconds.toFixed(1)} s ` +
      `(under strace): ${syncs} fsync/fdatasync calls (fsync ${counts.get('fsync') ?? 0}, ` +
      `fdatasync ${counts.get('fdatasync') ?? 0}, less ${warmSyncs} of start-up and warm-up) = ` +
      `${((syncs / acknowledged) * 1000).toFixed(1)} per 1,000 writes (target ≤ 50)`,
  )

  // 2. A lone write on an idle server: one send at a time, no strace.
  const idle = await startListening([...serve, ...limits])
  try {
    const token = agentTokens[0] as string
    for (let i = 0; i < 30; i++) await (await send(idle.url, token)).arrayBuffer()
    const latencies: number[] = []
    for (let i = 0; i < IDLE; i++) {
      const t = performance.now()
      const response = await send(idle.url, token)
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`send answered ${response.status}`)
      latencies.push(performance.now() - t)
      await Bun.sleep(2) // idle: nothing else in flight, the server's loop goes quiet in between
    }
    latencies.sort((a, b) => a - b)
    console.log(
      `idle single send (${IDLE}, one at a time): p50 ${ms(pct(latencies, 50))}, ` +
        `p90 ${ms(pct(latencies, 90))}, p99 ${ms(pct(latencies, 99))}`,
    )
  } finally {
    await idle.stop()
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
