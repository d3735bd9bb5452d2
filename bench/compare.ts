/**
 * Send throughput of Hark against the bare stack (bench/bare-server.ts), in the same run, with
 * `wrk` as the load generator (bench/wrk.ts): the same request, the same durable insert,
 * alternating rounds so that drift of the machine hits both alike.
 *
 *   bun bench/compare.ts [--seconds 5] [--rounds 2] [--connections 32] [--channels 1,64]
 *                        [--reads 0|1] [--vs OTHER_BINARY]
 *
 * Three contenders: the bare server committing each insert on its own (the per-write ceiling),
 * the bare server committing the inserts of one event-loop turn together (bench/bare-server.ts
 * --group-commit: the group-commit ceiling of this stack), and Hark (--write-limit 0). wrk runs
 * one thread with 32 connections (the shared yardstick's shape), once with every send on one
 * channel (one token) and once spread over 64 channels (64 tokens, round-robin). The share of
 * the ceiling is each round's Hark / bare+group, averaged over the rounds, as the yardstick
 * computes it. Each row gives the server's CPU (cores used and µs per request) and wrk's: a
 * generator near a full core is measuring itself.
 *
 * `--reads 1` (the default) adds Hark's `GET /health` and an authenticated feed read (a page of
 * ten messages of a channel of its own, `GET /v1/messages?since=0&peek=1`, answered at once).
 *
 * `--vs` adds a fourth contender in every round, another build of Hark (`hark-vs`), and prints
 * its rate and CPU per send beside this build's: two builds compared in the same run.
 *
 * Needs dist/hark (`bun run build`; `HARK_BENCH_CMD` runs another build) and Debian's wrk.
 * Target (issue 32): Hark ≥ 50% of the group-commit ceiling, for one channel and for 64.
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import {
  arg,
  argText,
  provision,
  type Started,
  startHark,
  startListening,
  startServe,
  tempDataDir,
} from './lib.ts'
import { runWrk, WRK_SEND_BODY, type WrkRequest, type WrkResult, wrkLine } from './wrk.ts'

const SECONDS = arg('seconds', 5)
const ROUNDS = arg('rounds', 2)
const CONNECTIONS = arg('connections', 32)
const READS = arg('reads', 1) === 1
const VS = argText('vs')
const SHAPES = (argText('channels') ?? '1,64').split(',').map(Number)
if (SHAPES.some((n) => !Number.isInteger(n) || n < 1)) throw new Error('--channels 1,64')
if (!Bun.which('wrk')) throw new Error('bench/compare.ts needs wrk (apt-get install wrk)')

const send = (tokens: readonly string[]): WrkRequest => ({
  method: 'POST',
  path: '/v1/messages',
  tokens,
  body: WRK_SEND_BODY,
})

async function measure(name: string, start: () => Promise<Started>, request: WrkRequest) {
  const server = await start()
  try {
    await runWrk(server.url, server.proc.pid, request, 1, CONNECTIONS) // warm-up
    const r = await runWrk(server.url, server.proc.pid, request, SECONDS, CONNECTIONS)
    console.log(`  ${name.padEnd(10)} ${wrkLine(r)}`)
    return r
  } finally {
    await server.stop()
  }
}

const bareDir = tempDataDir('hark-bare-')
const harkDir = tempDataDir('hark-cmp-')
try {
  const most = Math.max(...SHAPES)
  const bareTokens = (await provision(bareDir, most)).agentTokens
  // One more channel on Hark, for the feed read.
  const harkTokens = (await provision(harkDir, most + 1)).agentTokens
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
  const hark = () => startHark(harkDir, ['--write-limit', '0'])
  const harkVs = () => startServe([VS as string], harkDir, ['--write-limit', '0'])
  const summary: string[] = []
  for (const channels of SHAPES) {
    console.log(
      `send throughput: wrk, 1 thread, ${CONNECTIONS} connections, ${channels} channel(s), ` +
        `${SECONDS} s × ${ROUNDS} rounds each (alternating)`,
    )
    const rounds: { bare: WrkResult; group: WrkResult; hark: WrkResult; vs?: WrkResult }[] = []
    for (let round = 1; round <= ROUNDS; round++) {
      console.log(`round ${round}`)
      rounds.push({
        bare: await measure('bare', bareServer(), send(bareTokens.slice(0, channels))),
        group: await measure(
          'bare+group',
          bareServer('--group-commit'),
          send(bareTokens.slice(0, channels)),
        ),
        hark: await measure('hark', hark, send(harkTokens.slice(0, channels))),
        vs: VS ? await measure('hark-vs', harkVs, send(harkTokens.slice(0, channels))) : undefined,
      })
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length
    const groupRatio = mean(rounds.map((r) => r.hark.perSecond / r.group.perSecond))
    const sendRatio = mean(rounds.map((r) => r.hark.perSecond / r.bare.perSecond))
    const per = (pick: (r: (typeof rounds)[number]) => WrkResult) =>
      mean(rounds.map((r) => pick(r).perSecond)).toFixed(0)
    if (VS) {
      const cpu = (r: WrkResult) => (r.serverCpuMs * 1000) / r.requests
      const vsRounds = rounds.map((r) => [r.hark, r.vs as WrkResult] as const)
      summary.push(
        `${channels} channel(s): hark / hark-vs, round by round: rate ` +
          vsRounds.map(([a, b]) => (a.perSecond / b.perSecond).toFixed(2)).join(', ') +
          '; server CPU per send ' +
          vsRounds.map(([a, b]) => (cpu(a) / cpu(b)).toFixed(2)).join(', '),
      )
    }
    const errors = rounds.reduce((n, r) => n + r.bare.errors + r.group.errors + r.hark.errors, 0)
    summary.push(
      `${channels} channel(s): bare ${per((r) => r.bare)}/s, bare+group ${per((r) => r.group)}/s, ` +
        `hark ${per((r) => r.hark)}/s → group_ratio ${groupRatio.toFixed(3)} (target ≥ 0.5), ` +
        `send_ratio ${sendRatio.toFixed(3)}${errors ? `; ${errors} errors` : ''}`,
    )
  }
  if (READS) {
    console.log(`reads: wrk, 1 thread, ${CONNECTIONS} connections, ${SECONDS} s`)
    const server = await hark()
    try {
      const token = harkTokens[most] as string
      for (let i = 0; i < 10; i++) {
        await fetch(`${server.url}/v1/messages`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: WRK_SEND_BODY,
        })
      }
      for (const [name, request] of [
        ['/health', { method: 'GET', path: '/health', tokens: [] }],
        ['feed read', { method: 'GET', path: '/v1/messages?since=0&peek=1', tokens: [token] }],
      ] as const) {
        await runWrk(server.url, server.proc.pid, request, 1, CONNECTIONS)
        const r = await runWrk(server.url, server.proc.pid, request, SECONDS, CONNECTIONS)
        console.log(`  ${name.padEnd(10)} ${wrkLine(r)}`)
      }
    } finally {
      await server.stop()
    }
  }
  console.log(summary.join('\n'))
} finally {
  rmSync(bareDir, { recursive: true, force: true })
  rmSync(harkDir, { recursive: true, force: true })
}
