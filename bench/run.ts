/**
 * Benchmarks the compiled server (`dist/hark`, build it first) on loopback and prints figures:
 *   - send throughput: POST /v1/messages from many concurrent agents on many channels
 *   - wake latency: from a send to the waiting long-poll's answer, with other polls held
 *
 *   bun bench/run.ts [--seconds 10] [--concurrency 32] [--channels 64] [--held 1000] [--wakes 300]
 *
 * The load generator shares the machine's cores with the server: figures are a floor.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgentClient } from '../src/client/client.ts'
import { HARK, requireBinary, run, startServe } from '../test/binary/process.ts'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const SECONDS = arg('seconds', 10)
const CONCURRENCY = arg('concurrency', 32)
const CHANNELS = arg('channels', 64)
const HELD = arg('held', 1000)
const WAKES = arg('wakes', 300)

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
const ms = (n: number) => `${n.toFixed(2)} ms`

requireBinary()
const dir = mkdtempSync(join(tmpdir(), 'hark-bench-'))
try {
  await run(['admin', 'user', 'add', 'bench@example.com', '--owner', '--data', dir])
  const tokens: string[] = []
  for (let i = 0; i < CHANNELS; i++) {
    const r = await run(['admin', 'channel', 'add', '--user', 'bench@example.com', '--data', dir])
    tokens.push(r.stdout.trim().split('\n').at(-1) as string)
  }
  const served = await startServe(['--data', dir, '--write-limit', '0'])
  const clients = tokens.map((token) => createAgentClient({ baseUrl: served.url, token }))
  console.log(`hark ${HARK} on ${served.url}; ${CHANNELS} channels`)

  // Send throughput.
  const body = {
    body: {
      title: 'Build #42',
      text: 'All green',
      blocks: [{ type: 'progress', value: 3, max: 10 }],
    },
  }
  const latencies: number[] = []
  let errors = 0
  const end = performance.now() + SECONDS * 1000
  const worker = async (w: number) => {
    const client = clients[w % clients.length] as (typeof clients)[number]
    while (performance.now() < end) {
      const t = performance.now()
      try {
        await client.send(body)
        latencies.push(performance.now() - t)
      } catch {
        errors++
      }
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)))
  const elapsed = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  console.log(
    `send: ${(latencies.length / elapsed).toFixed(0)} msg/s over ${elapsed.toFixed(1)} s, ` +
      `concurrency ${CONCURRENCY}, p50 ${ms(pct(latencies, 50))}, p99 ${ms(pct(latencies, 99))}, errors ${errors}`,
  )

  // Wake latency with HELD other long-polls parked on the other channels.
  const abort = new AbortController()
  const others = clients.slice(1)
  const held = Array.from({ length: HELD }, (_, i) =>
    (others[i % others.length] as (typeof clients)[number])
      .feed({ since: 1e12, wait: 55 }, abort.signal)
      .catch(() => undefined),
  )
  await Bun.sleep(500)
  const target = clients[0] as (typeof clients)[number]
  /** Reads the feed to its end; returns the cursor there. */
  const drain = async (from: number) => {
    let cursor = from
    for (;;) {
      const page = await target.feed({ since: cursor, limit: 200 })
      cursor = page.cursor
      if (!page.has_more) return cursor
    }
  }
  let cursor = await drain(0)
  const wakes: number[] = []
  for (let i = 0; i < WAKES; i++) {
    const poll = target.feed({ since: cursor, wait: 10, sender: 'agent' })
    await Bun.sleep(2)
    const t = performance.now()
    const sent = target.send({ body: { text: `wake ${i}` } })
    const answer = await poll
    wakes.push(performance.now() - t)
    await sent
    cursor = await drain(answer.cursor)
  }
  wakes.sort((a, b) => a - b)
  console.log(
    `wake: send → long-poll answer with ${HELD} other polls held: p50 ${ms(pct(wakes, 50))}, ` +
      `p99 ${ms(pct(wakes, 99))}, max ${ms(wakes.at(-1) ?? Number.NaN)} (${WAKES} wakes)`,
  )
  const rss = Bun.spawnSync(['ps', '-o', 'rss=', '-p', String(served.proc.pid)]).stdout.toString()
  console.log(`server RSS with ${HELD} polls held: ${(Number(rss.trim()) / 1024).toFixed(1)} MiB`)
  abort.abort()
  await Promise.all(held)
  served.proc.kill('SIGTERM')
  await served.proc.exited
} finally {
  rmSync(dir, { recursive: true, force: true })
}
