/**
 * Startup of the compiled binary: time from exec of `dist/hark serve` to its first
 * `200 /health`, on a fresh data directory (creates the database) and on an existing one, and
 * its idle memory (RSS) a few seconds after start and after some traffic.
 *
 *   bun bench/startup.ts [--runs 10]
 *
 * Targets: /health answered < 300 ms after exec; idle RSS < 80 MB.
 */
import { rmSync } from 'node:fs'
import { arg, HARK, mib, ms, pct, provision, requireBinary, rssKiB, tempDataDir } from './lib.ts'

const RUNS = arg('runs', 10)
requireBinary()

/** A port nothing listens on right now. */
function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port as number
  probe.stop(true)
  return port
}

async function startOnce(dir: string) {
  const port = freePort()
  const started = performance.now()
  const proc = Bun.spawn(
    [HARK, 'serve', '--host', '127.0.0.1', '--port', String(port), '--data', dir],
    { stdout: 'ignore', stderr: 'ignore' },
  )
  let elapsed = Number.NaN
  while (performance.now() - started < 10_000) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/health`)
      if (response.ok) {
        elapsed = performance.now() - started
        break
      }
    } catch {
      // not listening yet
    }
    await Bun.sleep(1)
  }
  return { proc, port, elapsed }
}

const fresh: number[] = []
const existing: number[] = []
const dirs: string[] = []
try {
  for (let i = 0; i < RUNS; i++) {
    const dir = tempDataDir('hark-start-')
    dirs.push(dir)
    const first = await startOnce(dir)
    fresh.push(first.elapsed)
    first.proc.kill('SIGTERM')
    await first.proc.exited
    const again = await startOnce(dir)
    existing.push(again.elapsed)
    again.proc.kill('SIGTERM')
    await again.proc.exited
  }
  fresh.sort((a, b) => a - b)
  existing.sort((a, b) => a - b)
  console.log(
    `exec → 200 /health, fresh data dir:    median ${ms(pct(fresh, 50))}, max ${ms(fresh.at(-1) ?? 0)} (${RUNS} runs)`,
  )
  console.log(
    `exec → 200 /health, existing data dir: median ${ms(pct(existing, 50))}, max ${ms(existing.at(-1) ?? 0)} ` +
      `(target < 300 ms)`,
  )

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
