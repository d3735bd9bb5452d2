/**
 * Held long-polls on one server (dist/hark), each on its own socket:
 *   1. memory: RSS before and with `--held` polls parked on one channel → bytes per poll;
 *   2. idle CPU: the server's CPU time while they are held and nothing happens;
 *   3. the full wait: every poll must be answered `200 { messages: [] }` at `--wait` seconds
 *      (55: the longest), none cut early, none dropped;
 *   4. one change: the same number of polls parked again, one send → every poll woken; time
 *      from the send to the last answer.
 *
 *   bun bench/longpolls.ts [--held 10000] [--wait 55] [--idle 10]
 *
 * Targets: < 6 KB per poll, ~0% idle CPU, none cut before 55 s, all woken within 500 ms.
 * Raises the open-files limit (it re-runs itself under `ulimit -n 65536`, or the hard limit
 * when that is lower, when needed): this process holds one socket per poll, so does the server.
 */
import { rmSync } from 'node:fs'
import { MAX_HELD_POLLS } from '../src/core/holds.ts'
import {
  arg,
  cpuMs,
  mib,
  ms,
  pct,
  provision,
  type RawAnswer,
  raiseNofile,
  rawRequest,
  rssKiB,
  startHark,
  tempDataDir,
  threads,
} from './lib.ts'

const HELD = arg('held', 10_000)
const WAIT = arg('wait', 55)
const IDLE = arg('idle', 10)
const NOFILE = 65_536

const limit = Number(Bun.spawnSync(['bash', '-c', 'ulimit -n']).stdout.toString().trim())
if (limit < HELD + 1000 && !process.env.HARK_BENCH_REEXEC) {
  const proc = Bun.spawn(
    [
      'bash',
      '-c',
      `${raiseNofile(NOFILE)} && exec "$@"`,
      'bash',
      process.execPath,
      ...process.argv.slice(1),
    ],
    { env: { ...process.env, HARK_BENCH_REEXEC: '1' }, stdio: ['inherit', 'inherit', 'inherit'] },
  )
  process.exit(await proc.exited)
}

const dir = tempDataDir('hark-polls-')
try {
  // One channel, as many of its agents' tokens as the held polls need (MAX_HELD_POLLS each).
  const { channelTokens } = await provision(dir, 1, Math.ceil(HELD / MAX_HELD_POLLS))
  const tokens = channelTokens[0] as string[]
  const token = tokens[0] as string
  const server = await startHark(dir, ['--write-limit', '0'], { nofile: NOFILE })
  const pid = server.proc.pid
  const auth = { authorization: `Bearer ${token}` }
  console.log(`hark on ${server.url}; ${HELD} long-polls on one channel, wait=${WAIT}`)

  const send = (text: string) =>
    rawRequest(
      server.url,
      'POST',
      '/v1/messages',
      { ...auth, 'content-type': 'application/json' },
      JSON.stringify({ body: { text } }),
    )
  // Warm up the paths the polls and the send use, and find the cursor.
  for (let i = 0; i < 50; i++) await send(`warm-up ${i}`)
  let cursor = 0
  for (;;) {
    const page = await rawRequest(server.url, 'GET', `/v1/messages?since=${cursor}&peek=1`, auth)
    const parsed = JSON.parse(page.body) as { cursor: number; has_more: boolean }
    cursor = parsed.cursor
    if (!parsed.has_more) break
  }
  await Bun.sleep(1000)

  /** Parks `n` polls, a thousand connections at a time; resolves when all are sent. */
  const park = async (n: number) => {
    const polls: { opened: number; answer: Promise<RawAnswer> }[] = []
    for (let i = 0; i < n; i++) {
      polls.push({
        opened: performance.now(),
        answer: rawRequest(server.url, 'GET', `/v1/messages?since=${cursor}&wait=${WAIT}&peek=1`, {
          authorization: `Bearer ${tokens[i % tokens.length]}`,
        }),
      })
      if (i % 500 === 499) await Bun.sleep(20)
    }
    await Bun.sleep(2000) // let the server take every request in
    return polls
  }

  // 1–2. Memory and idle CPU (with nothing held first, for comparison).
  const base0 = cpuMs(pid)
  await Bun.sleep(IDLE * 1000)
  const cpuBase = ((cpuMs(pid) - base0) / (IDLE * 1000)) * 100
  const rss0 = rssKiB(pid)
  const opened = performance.now()
  const first = await park(HELD)
  const rss1 = rssKiB(pid)
  const perPoll = ((rss1 - rss0) * 1024) / HELD
  console.log(
    `memory: RSS ${mib(rss0)} idle → ${mib(rss1)} with ${HELD} polls held = ${(perPoll / 1024).toFixed(2)} KiB per poll ` +
      `(target < 6 KB) [${threads(pid)} threads]`,
  )
  const cpu0 = cpuMs(pid)
  await Bun.sleep(IDLE * 1000)
  const cpuIdle = ((cpuMs(pid) - cpu0) / (IDLE * 1000)) * 100
  const rssSettled = rssKiB(pid)
  console.log(
    `idle CPU with ${HELD} polls held: ${cpuIdle.toFixed(2)}% of one core over ${IDLE} s ` +
      `(${cpuBase.toFixed(2)}% with none held; target ~0%)`,
  )
  console.log(
    `memory after ${IDLE} s idle: RSS ${mib(rssSettled)} = ${(((rssSettled - rss0) * 1024) / HELD / 1024).toFixed(2)} KiB per poll`,
  )

  // 3. The full wait.
  const answers = await Promise.all(first.map((p) => p.answer))
  const held = answers
    .map((a, i) => (a.at - (first[i]?.opened as number)) / 1000)
    .sort((a, b) => a - b)
  const empty = answers.filter((a) => a.status === 200 && a.body.includes('"messages":[]')).length
  const early = held.filter((s) => s < WAIT - 0.05).length
  const dropped = answers.filter((a) => a.status === 0).length
  console.log(
    `full wait: ${empty}/${HELD} answered 200 with no messages; held ${held[0]?.toFixed(2)} s to ` +
      `${held.at(-1)?.toFixed(2)} s (wait=${WAIT}); cut early: ${early}; dropped: ${dropped}; ` +
      `other statuses: ${HELD - empty - dropped}` +
      ` (opened over ${((first.at(-1)?.opened as number) - opened).toFixed(0)} ms)`,
  )

  // 4. One change wakes them all.
  const second = await park(HELD)
  const rss2 = rssKiB(pid)
  const serverCpu0 = cpuMs(pid)
  const clientCpu0 = process.cpuUsage()
  const sent = performance.now()
  const reply = await send('wake everyone')
  const woken = await Promise.all(second.map((p) => p.answer))
  const serverCpu = cpuMs(pid) - serverCpu0
  const clientUsage = process.cpuUsage(clientCpu0)
  const clientCpu = (clientUsage.user + clientUsage.system) / 1000
  const after = woken.map((a) => a.at - sent).sort((a, b) => a - b)
  const id = (JSON.parse(reply.body) as { message: { id: string } }).message.id
  const got = woken.filter((a) => a.status === 200 && a.body.includes(id)).length
  console.log(
    `one change: ${got}/${HELD} polls answered with the new message; first ${ms(after[0] ?? Number.NaN)}, ` +
      `p50 ${ms(pct(after, 50))}, p99 ${ms(pct(after, 99))}, last ${ms(after.at(-1) ?? Number.NaN)} after the send ` +
      `(target: all within 500 ms); dropped ${woken.filter((a) => a.status === 0).length}`,
  )
  console.log(
    `  CPU spent meanwhile: server ${serverCpu.toFixed(0)} ms, this load generator ${clientCpu.toFixed(0)} ms ` +
      `(2 cores shared)`,
  )
  await Bun.sleep(1000)
  console.log(
    `RSS: ${mib(rss2)} with the second set held, ${mib(rssKiB(pid))} after it was answered`,
  )
  await server.stop()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
