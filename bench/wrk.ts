/**
 * The throughput benches' load generator: Debian's `wrk` (C, one thread, event-driven), not a
 * Bun client on the same two cores. A Bun client tops out near 3,000 requests/s here and so
 * measured itself, not the server (issue 32). Every run reports wrk's own CPU beside the
 * server's, so a reader can see which of the two was the bottleneck.
 *
 * Requests are built once, in wrk's Lua `init`, and handed out round-robin: one per agent token
 * (one channel each), so the script costs wrk nothing per request beyond picking the next.
 */
import { rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { cpuMs } from './lib.ts'

export interface WrkRequest {
  method: 'GET' | 'POST'
  /** Path and query, e.g. `/v1/messages`. */
  path: string
  /** Agent tokens to cycle through (none: no Authorization header). */
  tokens: readonly string[]
  body?: string
}

export interface WrkResult {
  /** Answers with a 2xx or 3xx status, per second. */
  perSecond: number
  requests: number
  /** Answers with another status, plus connect, read, write and timeout errors. */
  errors: number
  p50Ms: number
  p99Ms: number
  seconds: number
  /** CPU time (user + system) of the server's process during the run, in ms. */
  serverCpuMs: number
  /** CPU time (user + system) of wrk during the run, in ms. */
  wrkCpuMs: number
}

/** The send of the shared yardstick (`post.lua`): a short text message. */
export const WRK_SEND_BODY = '{"body":{"text":"build 1234 finished: all 812 tests passed"}}'

const lua = (s: string) => JSON.stringify(s) // a JSON string is a valid Lua string literal here

function script(request: WrkRequest): string {
  const headers = (token: string | undefined) =>
    [
      ...(token ? [`["Authorization"] = ${lua(`Bearer ${token}`)}`] : []),
      ...(request.body ? ['["Content-Type"] = "application/json"'] : []),
    ].join(', ')
  const tokens = request.tokens.length > 0 ? request.tokens : [undefined]
  const built = tokens.map(
    (t) =>
      `  reqs[#reqs + 1] = wrk.format(${lua(request.method)}, ${lua(request.path)}, { ${headers(t)} }, ${
        request.body ? lua(request.body) : 'nil'
      })`,
  )
  return `local reqs = {}
local i = 0
init = function(args)
${built.join('\n')}
end
request = function()
  i = i % #reqs + 1
  return reqs[i]
end
`
}

const durationMs = (value: string, unit: string) =>
  Number(value) * ({ us: 0.001, ms: 1, s: 1000, m: 60_000 }[unit] ?? Number.NaN)

/** Parses wrk's `--latency` report (its wording is stable across 4.x). */
export function parseWrk(out: string): Omit<WrkResult, 'serverCpuMs' | 'wrkCpuMs' | 'seconds'> {
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Number.NaN)
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN)
  const percentile = (p: string) => {
    const m = new RegExp(`^\\s+${p}%\\s+([\\d.]+)(us|ms|s|m)\\s*$`, 'm').exec(out)
    return m ? durationMs(m[1] as string, m[2] as string) : Number.NaN
  }
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)
  const socketErrors = socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0
  // wrk counts every answer in Requests/sec; a bench counts only the good ones.
  const good = requests - non2xx
  return {
    requests,
    perSecond: requests > 0 ? (perSecond * good) / requests : 0,
    errors: non2xx + socketErrors,
    p50Ms: percentile('50'),
    p99Ms: percentile('99'),
  }
}

/** Runs wrk (1 thread, `connections` connections) for `seconds` against `url`'s server. */
export async function runWrk(
  url: string,
  serverPid: number,
  request: WrkRequest,
  seconds: number,
  connections: number,
): Promise<WrkResult> {
  const file = join(tmpdir(), `hark-wrk-${process.pid}-${Math.random().toString(36).slice(2)}.lua`)
  writeFileSync(file, script(request))
  try {
    const cpu0 = cpuMs(serverPid)
    const started = performance.now()
    const proc = Bun.spawn(
      [
        'wrk',
        '-t1',
        `-c${connections}`,
        `-d${seconds}s`,
        '--latency',
        '-s',
        file,
        `${url}${request.path}`,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    const [out, err] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
    ])
    await proc.exited
    const serverCpuMs = cpuMs(serverPid) - cpu0
    const elapsed = (performance.now() - started) / 1000
    if (proc.exitCode !== 0) throw new Error(`wrk exited ${proc.exitCode}: ${err}${out}`)
    const usage = proc.resourceUsage()
    const wrkCpuMs = usage ? Number(usage.cpuTime.user + usage.cpuTime.system) / 1000 : Number.NaN
    return { ...parseWrk(out), seconds: elapsed, serverCpuMs, wrkCpuMs }
  } finally {
    rmSync(file, { force: true })
  }
}

/** `12,345/s (server 0.97 core, wrk 0.31 core) p50 1.2 ms p99 9.8 ms`. */
export function wrkLine(r: WrkResult): string {
  const core = (cpu: number) => (cpu / 1000 / r.seconds).toFixed(2)
  const perRequest = r.requests > 0 ? (r.serverCpuMs * 1000) / r.requests : Number.NaN
  return (
    `${r.perSecond.toFixed(0).padStart(6)}/s  server ${core(r.serverCpuMs)} core ` +
    `(${perRequest.toFixed(0)} µs/request), wrk ${core(r.wrkCpuMs)} core  ` +
    `p50 ${r.p50Ms.toFixed(2)} ms  p99 ${r.p99Ms.toFixed(2)} ms` +
    (r.errors ? `  errors ${r.errors}` : '')
  )
}
