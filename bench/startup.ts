/**
 * Startup of the compiled binary: time from exec of `dist/hark serve` to its first
 * `200 /health`, on a fresh data directory (creates the database) and on an existing one, and
 * its idle memory (RSS) a few seconds after start and after some traffic.
 *
 *   bun bench/startup.ts [--runs 10] [--bin PATH] [--vs OTHER_BINARY]
 *
 * Beside each wall time, the server's own CPU time (user + system, from /proc) up to that
 * answer: on a shared, loaded machine the wall time says as much about the neighbours as about
 * Hark, the CPU time much less. `--vs` alternates a second build run for run (A B A B ...) and
 * prints the ratio of each pair, the figure that holds when the machine's speed drifts.
 *
 * Targets: /health answered < 300 ms after exec; idle RSS < 80 MB.
 */
import { rmSync } from 'node:fs'
import {
  arg,
  cpuMs,
  HARK,
  mib,
  ms,
  pct,
  provision,
  requireBinary,
  rssKiB,
  tempDataDir,
} from './lib.ts'

const RUNS = arg('runs', 10)
const option = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const BIN = option('bin') ?? HARK
const VS = option('vs')
if (BIN === HARK) requireBinary()

/** A port nothing listens on right now. */
function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port as number
  probe.stop(true)
  return port
}

async function startOnce(dir: string, bin = BIN) {
  const port = freePort()
  const started = performance.now()
  const proc = Bun.spawn(
    [bin, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data', dir],
    { stdout: 'ignore', stderr: 'ignore' },
  )
  let elapsed = Number.NaN
  let cpu = Number.NaN
  while (performance.now() - started < 10_000) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`)
      if (response.ok) {
        elapsed = performance.now() - started
        cpu = cpuMs(proc.pid)
        break
      }
    } catch {
      // not listening yet
    }
    await Bun.sleep(1)
  }
  return { proc, port, elapsed, cpu }
}

interface Runs {
  fresh: number[]
  existing: number[]
  freshCpu: number[]
  existingCpu: number[]
}
const runsOf = (): Runs => ({ fresh: [], existing: [], freshCpu: [], existingCpu: [] })

/** One fresh start (creates the database) and one on the data it left, with `bin`. */
async function measure(bin: string, into: Runs) {
  const dir = tempDataDir('hark-start-')
  dirs.push(dir)
  const first = await startOnce(dir, bin)
  into.fresh.push(first.elapsed)
  into.freshCpu.push(first.cpu)
  first.proc.kill('SIGTERM')
  await first.proc.exited
  const again = await startOnce(dir, bin)
  into.existing.push(again.elapsed)
  into.existingCpu.push(again.cpu)
  again.proc.kill('SIGTERM')
  await again.proc.exited
}

const median = (xs: number[]) =>
  pct(
    [...xs].sort((a, b) => a - b),
    50,
  )
const max = (xs: number[]) => Math.max(...xs)
function report(name: string, r: Runs) {
  if (name) console.log(name)
  console.log(
    `exec → 200 /health, fresh data dir:    median ${ms(median(r.fresh))}, max ${ms(max(r.fresh))}; ` +
      `CPU median ${ms(median(r.freshCpu))} (${r.fresh.length} runs)`,
  )
  console.log(
    `exec → 200 /health, existing data dir: median ${ms(median(r.existing))}, max ${ms(max(r.existing))}; ` +
      `CPU median ${ms(median(r.existingCpu))} (target < 300 ms)`,
  )
}
const ratios = (a: number[], b: number[]) => median(a.map((x, i) => x / (b[i] as number)))

const dirs: string[] = []
try {
  const a = runsOf()
  const b = runsOf()
  for (let i = 0; i < RUNS; i++) {
    await measure(BIN, a)
    if (VS) await measure(VS, b)
  }
  report(VS ? `A: ${BIN}` : '', a)
  if (VS) {
    report(`B: ${VS}`, b)
    console.log(
      `A/B pair by pair, median: wall ${ratios(a.existing, b.existing).toFixed(2)} (existing), ` +
        `${ratios(a.fresh, b.fresh).toFixed(2)} (fresh); CPU ${ratios(a.existingCpu, b.existingCpu).toFixed(2)} ` +
        `(existing), ${ratios(a.freshCpu, b.freshCpu).toFixed(2)} (fresh)`,
    )
  }

  // Idle memory: just started, then after some traffic has warmed every route up.
  const dir = tempDataDir('hark-idle-')
  dirs.push(dir)
  const { agentTokens } = await provision(dir, 1)
  const run = await startOnce(dir)
  await Bun.sleep(3000)
  const idle = rssKiB(run.proc.pid)
  const headers = { authorization: `Bearer ${agentTokens[0]}`, 'content-type': 'application/json' }
  for (let i = 0; i < 500; i++) {
    await fetch(`http://127.0.0.1:${run.port}/v1/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ body: { text: `hello ${i}` } }),
    })
    await fetch(`http://127.0.0.1:${run.port}/v1/messages?since=${i}`, { headers })
  }
  await Bun.sleep(3000)
  const warm = rssKiB(run.proc.pid)
  console.log(
    `idle RSS: ${mib(idle)} 3 s after start, ${mib(warm)} idle after 1,000 requests (target < 80 MB)`,
  )
  run.proc.kill('SIGTERM')
  await run.proc.exited
} finally {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}
