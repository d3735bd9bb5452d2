/**
 * The SQL of a send alone, statement by statement: a provisioned data directory, then batches
 * of 32 sends in the group commit's shape (BEGIN IMMEDIATE; per send a savepoint, the person's
 * change number, the high-water mark, the message's INSERT ... RETURNING with its search note,
 * the person's device count, RELEASE; per batch the search index and COMMIT, then fdatasync of
 * the log), timed per statement over the last 900 batches, as µs per send. No HTTP, no unit
 * machinery: the floor the database itself puts under a send. `--random-ids` makes ids as every
 * build before time-ordered message ids did (src/core/ids.ts `newMessageId`). `--drop` names
 * indexes or triggers to drop first (comma-separated), to price each one.
 *
 *   bun bench/send-sql.ts [--batches 8000] [--random-ids] [--drop messages_live,...]
 */
import { fdatasyncSync, openSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { newMessageId, randomBase62 } from '../src/core/ids.ts'
import { openDatabase } from '../src/db/database.ts'
import { searchIndexer } from '../src/messages/search/store.ts'
import { arg, provision, tempDataDir } from './lib.ts'
import { WRK_SEND_BODY } from './wrk.ts'

const BATCHES = Math.max(arg('batches', 8000), 1000)
const RANDOM_IDS = process.argv.includes('--random-ids')
const PER_BATCH = 32
const MEASURED = 900

const dir = tempDataDir('hark-send-sql-')
const { channelIds } = await provision(dir, 1)
const db = openDatabase(join(dir, 'hark.db'))
db.run('PRAGMA temp_store = MEMORY')
const dropped = process.argv[process.argv.indexOf('--drop') + 1]
for (const name of process.argv.includes('--drop') ? (dropped ?? '').split(',') : []) {
  const kind = db
    .query<{ type: string }, [string]>('SELECT type FROM sqlite_master WHERE name = ?1')
    .get(name)
  if (!kind) throw new Error(`--drop: no index or trigger named ${name}`)
  db.run(`DROP ${kind.type.toUpperCase()} ${name}`)
}
const channel = channelIds[0] as string
const user = db.query<{ user_id: string }, [string]>('SELECT user_id FROM channels WHERE id = ?1')
const userId = user.get(channel)?.user_id as string
// The statements of messages/store.ts and push/store.ts as a send runs them.
const statements = {
  savepoint: db.query('SAVEPOINT unit'),
  release: db.query('RELEASE unit'),
  seq: db.query<{ value: number }, [string]>(
    `UPDATE users SET change_seq = change_seq + 1
     WHERE id = (SELECT user_id FROM channels WHERE id = ?1) RETURNING change_seq AS value`,
  ),
  highWater: db.query("UPDATE counters SET value = max(value, ?1) WHERE name = 'change_seq'"),
  insert: db.query(
    `INSERT INTO messages (id, channel_id, seq, sender, body, silent, pin_key, ask_status,
       ask_expires_at, ask_request_hash, created_at, updated_at)
     VALUES (?1, ?2, ?3, 'agent', ?4, 0, NULL, NULL, NULL, NULL, ?5, ?5) RETURNING *`,
  ),
  devices: db.query('SELECT count(*) AS n FROM push_subscriptions WHERE user_id = ?1'),
  begin: db.query('BEGIN IMMEDIATE'),
  commit: db.query('COMMIT'),
}
const indexNoted = searchIndexer(db)
const spent: Record<string, number> = {}
const timed = <T>(name: string, run: () => T): T => {
  const started = performance.now()
  const value = run()
  spent[name] = (spent[name] ?? 0) + performance.now() - started
  return value
}
const wal = openSync(join(dir, 'hark.db-wal'), 'r+')
const body = JSON.stringify(JSON.parse(WRK_SEND_BODY).body)
let sends = 0
// CPU time of the measured batches: on a loaded machine the statements' wall times above grow
// with the waiting, the process's CPU time does not.
let cpu = process.cpuUsage()
try {
  for (let batch = 0; batch < BATCHES; batch++) {
    if (batch === BATCHES - MEASURED) {
      for (const name of Object.keys(spent)) spent[name] = 0
      sends = 0
      cpu = process.cpuUsage()
    }
    db.run('PRAGMA synchronous = NORMAL')
    timed('begin', () => statements.begin.run())
    for (let i = 0; i < PER_BATCH; i++, sends++) {
      const now = Date.now()
      const id = RANDOM_IDS ? `msg_${randomBase62(18)}` : newMessageId(now)
      timed('savepoint', () => statements.savepoint.run())
      const seq = timed('change number', () => statements.seq.get(channel)?.value ?? 0)
      timed('high-water', () => statements.highWater.run(seq))
      timed('insert', () => statements.insert.get(id, channel, seq, body, now))
      timed('devices', () => statements.devices.get(userId))
      timed('release', () => statements.release.run())
    }
    timed('search index', indexNoted)
    timed('commit', () => statements.commit.run())
    db.run('PRAGMA synchronous = FULL')
    timed('fdatasync', () => fdatasyncSync(wal))
  }
  const used = process.cpuUsage(cpu)
  const perSend = (ms: number) => ((ms * 1000) / sends).toFixed(1)
  const total = Object.entries(spent).filter(([name]) => name !== 'fdatasync')
  const sum = total.reduce((a, [, ms]) => a + ms, 0)
  console.log(
    `${BATCHES * PER_BATCH} messages, ${RANDOM_IDS ? 'random' : 'time-ordered'} ids; µs per send over the last ${sends}: ` +
      `${Object.entries(spent)
        .map(([name, ms]) => `${name} ${perSend(ms)}`)
        .join(', ')}; SQL without the sync ${perSend(sum)}; ` +
      `CPU ${perSend((used.user + used.system) / 1000)}`,
  )
} finally {
  db.close()
  rmSync(dir, { recursive: true, force: true })
}
