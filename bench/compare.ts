/**
 * Send throughput of Hark against the bare stack (bench/bare-server.ts), in the same run:
 * the same load generator, the same request, the same durable insert, alternating rounds so
 * that drift of the machine hits both alike.
 *
 *   bun bench/compare.ts [--seconds 5] [--rounds 3] [--concurrency 32] [--channels 64]
 *
 * Three contenders: the bare server committing each insert on its own (the per-write ceiling),
 * the bare server committing the inserts of one event-loop turn together (bench/bare-server.ts
 * --group-commit: the group-commit ceiling of this stack), and Hark.
 *
 * Needs dist/hark (`bun run build`). Hark runs with --write-limit 0. Target (issue 17): Hark ≥
 * 50% of the group-commit ceiling measured in the same run.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  arg,
  closedLoop,
  type LoadResult,
  ms,
  pct,
  provision,
  type Started,
  sendRequest,
  startHark,
  startListening,
  tempDataDir,
} from './lib.ts'

const SECONDS = arg('seconds', 5)
const ROUNDS = arg('rounds', 3)
const CONCURRENCY = arg('concurrency', 32)
const CHANNELS = arg('channels', 64)

async function measure(name: string, start: () => Promise<Started>, tokens: string[]) {
  const server = await start()
  const request = (w: number) => sendRequest(server.url, tokens[w % tokens.length] as string)
  try {
    await closedLoop(1, CONCURRENCY, request) // warm-up
    const r = await closedLoop(SECONDS, CONCURRENCY, request)
    console.log(
      `  ${name.padEnd(10)} ${r.perSecond.toFixed(0).padStart(6)} msg/s  p50 ${ms(pct(r.latencies, 50))}  ` +
        `p99 ${ms(pct(r.latencies, 99))}  errors ${r.errors}`,
    )
    return r
  } finally {
    await server.stop()
  }
}

const bareDir = tempDataDir('hark-bare-')
const harkDir = tempDataDir('hark-cmp-')
try {
  const bareTokens = (await provision(bareDir, CHANNELS)).agentTokens
  const harkTokens = (await provision(harkDir, CHANNELS)).agentTokens
  console.log(
    `send throughput, ${CONCURRENCY} concurrent senders over ${CHANNELS} channels, ` +
      `${SECONDS} s × ${ROUNDS} rounds each (alternating)`,
  )
  const bare: LoadResult[] = []
  const hark: LoadResult[] = []
  const group: LoadResult[] = []
  const bareServer =
    (...extra: string[]) =>
    () =>
      startListening([
        process.execPath,
        join(import.meta.dir, 'bare-server.ts'),
        '--data',
        bareDir,
        ...extra,
      ])
  for (let round = 1; round <= ROUNDS; round++) {
    console.log(`round ${round}`)
    bare.push(await measure('bare', bareServer(), bareTokens))
    group.push(await measure('bare+group', bareServer('--group-commit'), bareTokens))
    hark.push(await measure('hark', () => startHark(harkDir, ['--write-limit', '0']), harkTokens))
  }
  const median = (rs: LoadResult[]) =>
    rs.map((r) => r.perSecond).sort((a, b) => a - b)[Math.floor(rs.length / 2)] as number
  const b = median(bare)
  const h = median(hark)
  const g = median(group)
  const errors = [...bare, ...hark, ...group].reduce((n, r) => n + r.errors, 0)
  console.log(
    `median: bare ${b.toFixed(0)} msg/s, bare+group ${g.toFixed(0)} msg/s, hark ${h.toFixed(0)} msg/s → ` +
      `hark = ${((h / g) * 100).toFixed(0)}% of the group-commit ceiling (target ≥ 50%), ` +
      `${((h / b) * 100).toFixed(0)}% of the per-write one${errors ? `; ${errors} errors` : ''}`,
  )
} finally {
  rmSync(bareDir, { recursive: true, force: true })
  rmSync(harkDir, { recursive: true, force: true })
}
