/**
 * HTTPS by `--domain`, against Debian's pebble (Let's Encrypt's ACME test server) on loopback:
 *
 * 1. The first certificate: `dist/hark serve --domain` on an empty data directory, from exec to
 *    the certificate obtained and to HTTPS serving (target < 10 s), over `--runs` starts.
 * 2. A renewal under load: wrk (a C load generator, 32 connections) against the HTTPS listener
 *    for `--seconds`, while the certificate is renewed every 2 s (a new listener swapped in on
 *    the same port): every request must be answered. Once with keep-alive connections, once
 *    with a new connection per request (`Connection: close`), which also crosses each swap's
 *    moment of two listeners. wrk's CPU is shown beside the server's.
 *
 *   bun bench/tls.ts [--runs 5] [--seconds 10]
 */

import { DEFAULTS } from '../src/core/config.ts'
import { silentLogger } from '../src/core/log.ts'
import { createContext } from '../src/server/context.ts'
import { startHttps } from '../src/server/https.ts'
import { freePort, startPebble } from '../test/tls/pebble.ts'
import { spawnHark } from '../test/tls/serve.ts'
import { arg, cpuMs, pct, requireBinary, tempDataDir } from './lib.ts'

const runs = arg('runs', 5)
const seconds = arg('seconds', 10)
requireBinary()

const httpPort = await freePort()
const pebble = await startPebble(httpPort)

// 1. The first certificate, through the binary.
const obtained: number[] = []
const serving: number[] = []
for (let i = 0; i < runs; i++) {
  const port = await freePort()
  const started = performance.now()
  const hark = spawnHark([
    '--data',
    tempDataDir('hark-bench-tls-'),
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--http-port',
    String(httpPort),
    '--domain',
    `run${i}.bench.test`,
    '--acme-directory',
    pebble.directory,
    '--acme-ca',
    pebble.directoryCaFile,
  ])
  await hark.until(/obtained a certificate/, 30_000)
  obtained.push(performance.now() - started)
  await hark.until(/hark listening on/, 30_000)
  serving.push(performance.now() - started)
  await hark.stop()
}
const summary = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return `min ${(s[0] as number).toFixed(0)} ms, median ${pct(s, 50).toFixed(0)} ms, max ${(s.at(-1) as number).toFixed(0)} ms`
}
console.log(`first certificate (exec -> obtained), ${runs} runs: ${summary(obtained)}`)
console.log(`first certificate (exec -> HTTPS serving), ${runs} runs: ${summary(serving)}`)

// 2. Renewals under load, in process (the bench forces them).
const port = await freePort()
const ctx = await createContext(
  {
    ...DEFAULTS,
    dataDir: tempDataDir('hark-bench-tls-'),
    host: '127.0.0.1',
    port,
    httpPort,
    baseUrl: `https://renew.bench.test:${port}`,
    writeLimit: 0,
    domains: ['renew.bench.test'],
    acmeDirectory: pebble.directory,
    acmeCa: pebble.directoryCaFile,
  },
  { log: silentLogger },
)
const running = await startHttps(ctx)
await running.ready

async function loadWithRenewals(label: string, extra: string[]) {
  const wrk = Bun.spawn(
    [
      'wrk',
      '-t',
      '2',
      '-c',
      '32',
      '-d',
      `${seconds}s`,
      ...extra,
      `https://127.0.0.1:${port}/health`,
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  let wrkCpu = 0
  const serverCpuBefore = cpuMs(process.pid)
  const sample = setInterval(() => {
    try {
      wrkCpu = cpuMs(wrk.pid)
    } catch {}
  }, 500)
  const renewals = await renewUntil(performance.now() + seconds * 1000)
  const out = await new Response(wrk.stdout).text()
  await wrk.exited
  clearInterval(sample)
  const serverCpu = cpuMs(process.pid) - serverCpuBefore
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0)
  const socket = /Socket errors: (.*)/.exec(out)?.[1] ?? 'connect 0, read 0, write 0, timeout 0'
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0)
  const rate = /Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]
  console.log(
    `${label}: ${requests} requests (${rate}/s) across ${renewals} renewals; socket errors: ${socket}; non-2xx: ${non2xx}; ` +
      `CPU: wrk ${((wrkCpu / (seconds * 1000)) * 100).toFixed(0)}% of a core, hark ${((serverCpu / (seconds * 1000)) * 100).toFixed(0)}%`,
  )
}

/** Forces a renewal every 2 s until `end`; how many were made. */
async function renewUntil(end: number): Promise<number> {
  let renewals = 0
  while (performance.now() + 2000 < end) {
    await Bun.sleep(2000)
    await running.renewal?.renewNow()
    renewals++
  }
  return renewals
}

/**
 * A new TLS connection per request: `hey -disable-keepalive` (wrk reads Bun's close of a
 * `Connection: close` TLS connection as an error even with no renewal at all). Its requests
 * also land on listeners that are draining or just started.
 */
async function connectionPerRequest() {
  const hey = Bun.spawn(
    [
      'hey',
      '-z',
      `${seconds}s`,
      '-c',
      '32',
      '-disable-keepalive',
      `https://127.0.0.1:${port}/health`,
    ],
    { stdout: 'pipe', stderr: 'pipe' },
  )
  const serverCpuBefore = cpuMs(process.pid)
  let heyCpu = 0
  const renewals = renewUntil(performance.now() + seconds * 1000)
  const sample = setInterval(() => {
    try {
      heyCpu = cpuMs(hey.pid)
    } catch {}
  }, 500)
  const out = await new Response(hey.stdout).text()
  await hey.exited
  clearInterval(sample)
  const serverCpu = cpuMs(process.pid) - serverCpuBefore
  const ok = Number(/\[200\]\s+(\d+) responses/.exec(out)?.[1] ?? 0)
  const errors = out.includes('Error distribution:')
    ? (out.split('Error distribution:')[1] as string).trim().split('\n').slice(0, 5).join(' | ')
    : 'none'
  const others = [...out.matchAll(/\[(\d{3})\]\s+(\d+) responses/g)].filter((m) => m[1] !== '200')
  console.log(
    `renewal under load, a connection per request (hey): ${ok} answered 200 across ${await renewals} renewals; other statuses: ${others.length === 0 ? 'none' : others.map((m) => `${m[1]}x${m[2]}`).join(', ')}; errors: ${errors}; ` +
      `CPU: hey ${((heyCpu / (seconds * 1000)) * 100).toFixed(0)}% of a core, hark ${((serverCpu / (seconds * 1000)) * 100).toFixed(0)}%`,
  )
}

await loadWithRenewals('renewal under load, keep-alive (wrk)', [])
await connectionPerRequest()
await running.stop()
pebble.stop()
process.exit(0)
