/**
 * Feed reads on a big channel: builds a data directory whose channel holds `--messages`
 * messages (direct SQL inserts on the real schema, src/db/database.ts), then reads
 * `GET /v1/messages?since=` through the real server (dist/hark), one request at a time:
 *   - tail: `since` a few changes before the end (what a polling agent does);
 *   - page: `since` anywhere in the history, a full page of 200 messages;
 *   - first: `since=0`, the first page;
 * and the person's feed across their channels, `GET /v1/app/feed?since=`, tail and first page.
 *
 *   bun bench/feed.ts [--messages 1000000] [--reads 2000]
 *
 * Target: p99 < 5 ms. Each scenario also prints the server's own time per read, from its log
 * lines (request in → response built, 0.1 ms resolution), which leaves out the client's fetch
 * and JSON parse. Pin the two apart to keep them off each other's core:
 *   HARK_BENCH_CMD="taskset -c 0 dist/hark" taskset -c 1 bun bench/feed.ts
 */
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { randomBase62 } from '../src/core/ids.ts'
import { openDatabase } from '../src/db/database.ts'
import { arg, ms, pct, provision, startHark, tempDataDir } from './lib.ts'

const MESSAGES = arg('messages', 1_000_000)
const READS = arg('reads', 2000)

const dir = tempDataDir('hark-feed-')
try {
  const { agentTokens, channelIds, personToken } = await provision(dir, 2)
  const built = performance.now()
  const db = openDatabase(join(dir, 'hark.db'))
  const insert = db.query(
    `INSERT INTO messages (id, channel_id, seq, sender, body, silent, created_at, updated_at)
     VALUES (?1, ?2, ?3, 'agent', ?4, 0, ?5, ?5)`,
  )
  const now = Date.now() - MESSAGES
  db.transaction(() => {
    for (let seq = 1; seq <= MESSAGES; seq++) {
      // Every tenth message goes to another channel, so the big one is not alone in the index.
      const channel = seq % 10 === 0 ? channelIds[1] : channelIds[0]
      const body = JSON.stringify({
        title: `Build #${seq}`,
        text: `Step ${seq % 97} of the pipeline finished; all ${seq % 13} checks are green.`,
        blocks: [{ type: 'progress', value: seq % 10, max: 10 }],
      })
      insert.run(`msg_${randomBase62(18)}`, channel as string, seq, body, now + seq)
    }
    db.run("UPDATE counters SET value = ?1 WHERE name = 'change_seq'", [MESSAGES])
    // Since schema 6 each person has their own change sequence (the bench's one person).
    const columns = db.query<{ name: string }, []>("SELECT name FROM pragma_table_info('users')")
    if (columns.all().some((c) => c.name === 'change_seq')) {
      db.run('UPDATE users SET change_seq = ?1', [MESSAGES])
    }
  })()
  db.run('PRAGMA wal_checkpoint(TRUNCATE)')
  db.close()
  console.log(
    `built ${MESSAGES} messages (${Math.round(MESSAGES * 0.9)} in the measured channel) in ` +
      `${((performance.now() - built) / 1000).toFixed(1)} s`,
  )

  const server = await startHark(dir, ['--write-limit', '0'])
  const serverLog = () => server.log()
  const agent = { authorization: `Bearer ${agentTokens[0]}` }
  const person = { authorization: `Bearer ${personToken}` }
  const read = async (path: string, headers: Record<string, string>, query: string) => {
    const t = performance.now()
    const response = await fetch(`${server.url}${path}?${query}`, { headers })
    const body = (await response.json()) as { messages: unknown[] }
    if (!response.ok) throw new Error(`${response.status}: ${JSON.stringify(body)}`)
    return { ms: performance.now() - t, count: body.messages.length }
  }
  const scenario = async (
    name: string,
    query: () => string,
    path = '/v1/messages',
    headers: Record<string, string> = agent,
  ) => {
    for (let i = 0; i < 100; i++) await read(path, headers, query()) // warm-up
    const times: number[] = []
    let count = 0
    for (let i = 0; i < READS; i++) {
      const r = await read(path, headers, query())
      times.push(r.ms)
      count += r.count
    }
    times.sort((a, b) => a - b)
    await Bun.sleep(200) // let the last log lines arrive
    const line = new RegExp(`GET ${path.replaceAll('/', '\\/')} 200 ([\\d.]+)ms`, 'g')
    const server = [...serverLog().matchAll(line)]
      .slice(-READS)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b)
    console.log(
      `${name.padEnd(7)} p50 ${ms(pct(times, 50))}  p99 ${ms(pct(times, 99))}  max ${ms(times.at(-1) ?? 0)}  ` +
        `(${(count / READS).toFixed(0)} messages per read, ${READS} reads); ` +
        `server p50 ${ms(pct(server, 50))}  p99 ${ms(pct(server, 99))}`,
    )
    return pct(times, 99)
  }
  const p99s = [
    await scenario('tail', () => `since=${MESSAGES - 1 - Math.floor(Math.random() * 20)}`),
    await scenario('page', () => `since=${Math.floor(Math.random() * (MESSAGES - 3000))}`),
    await scenario('first', () => 'since=0'),
    // The person's feed merges both channels (the second holds every tenth message).
    await scenario(
      'p-tail',
      () => `since=${MESSAGES - 1 - Math.floor(Math.random() * 20)}`,
      '/v1/app/feed',
      person,
    ),
    await scenario('p-first', () => 'since=0', '/v1/app/feed', person),
  ]
  console.log(`worst p99 ${ms(Math.max(...p99s))} (target < 5 ms)`)
  await server.stop()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
