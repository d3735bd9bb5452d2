/**
 * Held long-polls on one machine (issue 32 item 4), each on its own socket, held by Node client
 * processes (bench/poll-client.mjs via node-polls.ts) connecting from 127.0.0.x source
 * addresses (16 per client), since one address to one port has only ~28,000 ephemeral ports:
 *   1. memory: the servers' RSS before and with `--held` polls parked on one channel → per poll;
 *   2. idle CPU: the servers' CPU time while they are held and nothing happens;
 *   3. the full wait: every poll must be answered `200 { messages: [] }` at `--wait` seconds
 *      (55: the longest), none cut early, none dropped;
 *   4. one change: as many polls parked again, one send → every poll woken; from the send to
 *      the last answer.
 * Beside each figure, the clients' own CPU (a load generator that ran out would show there).
 *
 *   bun bench/longpolls.ts [--held 50000] [--clients 4] [--instances 1] [--wait 55] [--idle 10]
 *                          [--rate 2000]
 *
 * `--rate`: new connections a second while parking (past the server's accept queue, the kernel
 * drops them; the kernel's count of such overflows is printed: it must stay 0).
 *
 * `--instances K` (K > 1) serves from K `dist/hark` processes on one port (`--reuse-port`) over
 * a throwaway local Postgres (test/pg/cluster.ts), as a multi-instance deployment on one
 * machine would: a process may hold only as many sockets as its open-files limit allows, and a
 * container may cap that (here at 20,000, and not raisable without CAP_SYS_RESOURCE). Each
 * process runs under `ulimit -n` raised to 65,536 or the hard limit, whichever is lower.
 *
 * Targets: ≤ 6 KB per poll, ~0% idle CPU, none cut before 55 s, all woken within 2 s.
 */
import { rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { withDatabase } from '../src/cli/admin/command.ts'
import { addChannel, addUser } from '../src/people/service.ts'
import { type PgCluster, startCluster } from '../test/pg/cluster.ts'
import {
  arg,
  cpuMs,
  endCursor,
  HARK,
  HOLDING,
  mib,
  ms,
  pct,
  provision,
  rawRequest,
  requireBinary,
  rssKiB,
  type Started,
  startListening,
  tempDataDir,
  threads,
} from './lib.ts'
import { nodePolls, type PollEnd } from './node-polls.ts'

const HELD = arg('held', 50_000)
const CLIENTS = arg('clients', 4)
const INSTANCES = arg('instances', 1)
const WAIT = arg('wait', 55)
const IDLE = arg('idle', 10)
const RATE = arg('rate', 2000)
const NOFILE = 65_536

const hard = Bun.spawnSync(['bash', '-c', 'ulimit -Hn']).stdout.toString().trim()
const perProcess = hard === 'unlimited' ? NOFILE : Math.min(NOFILE, Number(hard))
if (Math.ceil(HELD / INSTANCES) * 1.1 + 200 > perProcess) {
  console.error(
    `${HELD} polls over ${INSTANCES} server process(es) need more open files each than the ` +
      `hard limit here (${hard}); pass --instances ${Math.ceil((HELD * 1.1) / (perProcess - 200))} ` +
      '(Postgres, one port) or fewer --held',
  )
  process.exit(2)
}
if (Math.ceil(HELD / CLIENTS) + 200 > perProcess) {
  console.error(`${CLIENTS} clients cannot hold ${HELD} sockets: pass more --clients`)
  process.exit(2)
}

/** The kernel's count of connections dropped at a full accept queue (this network namespace). */
const overflows = () => {
  const lines = Bun.spawnSync(['nstat', '-az', 'TcpExtListenOverflows']).stdout.toString()
  return Number(/TcpExtListenOverflows\s+(\d+)/.exec(lines)?.[1] ?? Number.NaN)
}

/** A free loopback port for the instances to share. */
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number }
      s.close(() => resolve(port))
    })
  })

const dirs: string[] = []
let cluster: PgCluster | undefined
const servers: Started[] = []
try {
  requireBinary()
  let token: string
  let env: Record<string, string> = { ...HOLDING.env }
  if (INSTANCES === 1) {
    dirs.push(tempDataDir('hark-polls-'))
    token = (await provision(dirs[0] as string, 1)).agentTokens[0] as string
  } else {
    cluster = await startCluster()
    const url = await cluster.database('polls')
    dirs.push(tempDataDir('hark-polls-admin-'))
    token = await withDatabase(
      dirs[0] as string,
      async (p) => {
        await addUser(p, { email: 'bench@example.com', owner: true })
        return (await addChannel(p, { email: 'bench@example.com', label: 'polls' })).token
      },
      url,
    )
    env = { ...env, HARK_DATABASE_URL: url }
  }
  const port = await freePort()
  for (let i = 0; i < INSTANCES; i++) {
    const dir = INSTANCES === 1 ? (dirs[0] as string) : tempDataDir('hark-polls-')
    if (INSTANCES > 1) dirs.push(dir)
    const flags = ['--host', '127.0.0.1', '--port', String(port), '--data', dir]
    if (INSTANCES > 1) flags.push('--reuse-port')
    servers.push(
      await startListening([HARK, 'serve', ...flags, ...HOLDING.flags], { nofile: NOFILE, env }),
    )
  }
  const url = `http://127.0.0.1:${port}`
  const pids = servers.map((s) => s.proc.pid)
  const sum = (f: (pid: number) => number) => pids.reduce((t, pid) => t + f(pid), 0)
  const authorization = `Bearer ${token}`
  console.log(
    `${INSTANCES} hark process(es) on ${url}${INSTANCES > 1 ? ' (Postgres, --reuse-port)' : ''}; ` +
      `${HELD} long-polls on one channel from ${CLIENTS} Node clients (127.0.0.2–${1 + 16 * CLIENTS}), wait=${WAIT}; ` +
      `open files per process: ${perProcess}; load ${(await Bun.file('/proc/loadavg').text()).split(' ').slice(0, 3).join(' ')}`,
  )

  const send = (text: string) =>
    rawRequest(
      url,
      'POST',
      '/v1/messages',
      { authorization, 'content-type': 'application/json' },
      JSON.stringify({ body: { text } }),
    )
  for (let i = 0; i < 50; i++) await send(`warm-up ${i}`)
  const cursor = await endCursor(url, authorization)
  const path = `/v1/messages?since=${cursor}&wait=${WAIT}&peek=1`
  await Bun.sleep(1000)

  /** Parks HELD polls; resolves once every client has written every request, plus 2 s. */
  const park = async (marker: string) => {
    const opened = performance.timeOrigin + performance.now()
    const overflow0 = overflows()
    const polls = nodePolls(url, path, authorization, HELD, CLIENTS, marker, RATE)
    await polls.parked
    const parkedIn = performance.timeOrigin + performance.now() - opened
    await Bun.sleep(2000) // let the servers take every request in
    const dropped = overflows() - overflow0
    if (dropped !== 0)
      console.log(`  accept-queue overflows while parking: ${dropped} (any process here)`)
    return { ...polls, opened, parkedIn }
  }
  const clientCpu = (ps: number[]) => ps.reduce((t, pid) => t + cpuMs(pid), 0)

  // 1–2. Memory and idle CPU (with nothing held first, for comparison).
  const base0 = sum(cpuMs)
  await Bun.sleep(IDLE * 1000)
  const cpuBase = ((sum(cpuMs) - base0) / (IDLE * 1000)) * 100
  const rss0 = sum(rssKiB)
  const park0 = sum(cpuMs)
  const first = await park('never')
  const parkCpu = sum(cpuMs) - park0
  const rss1 = sum(rssKiB)
  console.log(
    `parked ${HELD} in ${(first.parkedIn / 1000).toFixed(1)} s: server CPU ${((parkCpu * 1000) / HELD).toFixed(0)} µs per poll ` +
      `(opening, reading, parking; 2 s idle included), clients ${((first.cpu.parked * 1000) / HELD).toFixed(0)} µs per poll`,
  )
  console.log(
    `memory: RSS ${mib(rss0)} idle → ${mib(rss1)} with ${HELD} polls held = ` +
      `${(((rss1 - rss0) * 1024) / HELD / 1024).toFixed(2)} KiB per poll (target ≤ 6 KB) ` +
      `[${sum(threads)} threads]`,
  )
  const cpu0 = sum(cpuMs)
  const cc0 = clientCpu(first.pids)
  await Bun.sleep(IDLE * 1000)
  const cpuIdle = ((sum(cpuMs) - cpu0) / (IDLE * 1000)) * 100
  const rssSettled = sum(rssKiB)
  console.log(
    `idle CPU with ${HELD} polls held: servers ${cpuIdle.toFixed(2)}% of one core over ${IDLE} s ` +
      `(${cpuBase.toFixed(2)}% with none held; target ~0%); clients ${(((clientCpu(first.pids) - cc0) / (IDLE * 1000)) * 100).toFixed(2)}%`,
  )
  console.log(
    `memory after ${IDLE} s idle: RSS ${mib(rssSettled)} = ${(((rssSettled - rss0) * 1024) / HELD / 1024).toFixed(2)} KiB per poll`,
  )
  // A second window: the first may still hold the collection of what parking left behind.
  const cpu1 = sum(cpuMs)
  await Bun.sleep(IDLE * 1000)
  console.log(
    `idle CPU, the next ${IDLE} s: servers ${(((sum(cpuMs) - cpu1) / (IDLE * 1000)) * 100).toFixed(2)}% of one core`,
  )

  // 3. The full wait.
  const ends = await first.ends
  const heldFor = ends.map((e) => (e.at - e.opened) / 1000).sort((a, b) => a - b)
  const empty = ends.filter((e) => e.status === 200 && e.kind === 'e').length
  const early = heldFor.filter((s) => s < WAIT - 0.05).length
  const dropped = ends.filter((e) => e.status === 0).length
  console.log(
    `full wait: ${empty}/${HELD} answered 200 with no messages; each held ${heldFor[0]?.toFixed(2)} s to ` +
      `${heldFor.at(-1)?.toFixed(2)} s from its connection (wait=${WAIT}); cut early: ${early}; ` +
      `dropped: ${dropped}; other: ${HELD - empty - dropped}; seen by ${ends.length}/${HELD}`,
  )

  // 4. One change wakes them all.
  const marker = `wake-${crypto.randomUUID()}`
  const second = await park(marker)
  const rss2 = sum(rssKiB)
  const serverCpu0 = sum(cpuMs)
  const sent = performance.timeOrigin + performance.now()
  await send(marker)
  const woken: PollEnd[] = await second.ends
  const serverCpu = sum(cpuMs) - serverCpu0
  const after = woken.map((e) => e.at - sent).sort((a, b) => a - b)
  const got = woken.filter((e) => e.status === 200 && e.kind === 'w').length
  const before = woken.filter((e) => e.at < sent)
  if (before.length > 0) {
    const h = before.map((e) => (e.at - e.opened) / 1000).sort((a, b) => a - b)
    console.log(
      `  ${before.length} ended before the send (kinds ${[...new Set(before.map((e) => e.kind))].join(',')}), ` +
        `held ${h[0]?.toFixed(2)}–${h.at(-1)?.toFixed(2)} s`,
    )
  }
  console.log(
    `one change: ${got}/${HELD} polls answered with the new message; first ${ms(after[0] ?? Number.NaN)}, ` +
      `p50 ${ms(pct(after, 50))}, p99 ${ms(pct(after, 99))}, last ${ms(after.at(-1) ?? Number.NaN)} after the send ` +
      `(target: all within 2 s); dropped ${woken.filter((e) => e.status === 0).length}`,
  )
  console.log(
    `  CPU meanwhile: servers ${serverCpu.toFixed(0)} ms (${((serverCpu * 1000) / HELD).toFixed(0)} µs per woken poll), ` +
      `clients ${(second.cpu.end - second.cpu.parked).toFixed(0)} ms (2 cores shared)`,
  )
  console.log(`RSS: ${mib(rss2)} with the second set held, ${mib(sum(rssKiB))} after`)
} finally {
  for (const s of servers) await s.stop()
  await cluster?.close()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
}
