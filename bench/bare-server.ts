/**
 * The bare stack Hark is measured against: `Bun.serve` + `bun:sqlite`, no framework, doing the
 * same durable work for `POST /v1/messages` as Hark does — look the bearer token up by its
 * SHA-256 hash, parse the JSON body, take the next change number and insert the message in one
 * immediate transaction on the same schema (WAL, synchronous = FULL, same indexes), answer
 * after the commit. No schema validation, no rate limit, no wake-ups, no logging.
 *
 *   bun bench/bare-server.ts --data DIR [--port 0] [--group-commit]
 *
 * With --group-commit, the inserts that arrive in one turn of the event loop are committed
 * together in one transaction (one fsync), and each request is answered after that commit:
 * still "acknowledged after commit", measured to decide whether Hark should do it
 * (docs/decisions.md).
 *
 * The data directory must be provisioned (bench/lib.ts `provision`): it reads Hark's tokens.
 */
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import { randomBase62 } from '../src/core/ids.ts'
import { openDatabase } from '../src/db/database.ts'

const flag = (name: string) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? undefined : process.argv[i + 1]
}
const dataDir = flag('data')
if (!dataDir) throw new Error('usage: bun bench/bare-server.ts --data DIR [--port N]')

const db = openDatabase(join(dataDir, 'hark.db'))
const tokenByHash = db.query<{ channel_id: string | null; kind: string }, [Uint8Array]>(
  'SELECT channel_id, kind FROM tokens WHERE hash = ?1 AND revoked_at IS NULL',
)
const channelById = db.query<{ id: string }, [string]>('SELECT id FROM channels WHERE id = ?1')
const nextSeq = db.query<{ value: number }, []>(
  "UPDATE counters SET value = value + 1 WHERE name = 'change_seq' RETURNING value",
)
const insert = db.query<
  { id: string; channel_id: string; seq: number; created_at: number },
  [string, string, number, string, number]
>(
  `INSERT INTO messages (id, channel_id, seq, sender, body, silent, created_at, updated_at)
   VALUES (?1, ?2, ?3, 'agent', ?4, 0, ?5, ?5) RETURNING id, channel_id, seq, created_at`,
)
const insertMessage = db.transaction((channelId: string, body: string) =>
  insert.get(
    `msg_${randomBase62(18)}`,
    channelId,
    (nextSeq.get() as { value: number }).value,
    body,
    Date.now(),
  ),
)

const GROUP_COMMIT = process.argv.includes('--group-commit')
type Row = ReturnType<typeof insert.get>
let queue: { channelId: string; body: string; resolve: (row: Row) => void }[] = []
const flushAll = db.transaction((items: typeof queue) =>
  items.map((item) =>
    insert.get(
      `msg_${randomBase62(18)}`,
      item.channelId,
      (nextSeq.get() as { value: number }).value,
      item.body,
      Date.now(),
    ),
  ),
)
function flush() {
  const items = queue
  queue = []
  const rows = flushAll.immediate(items)
  items.forEach((item, i) => {
    item.resolve(rows[i] ?? null)
  })
}
/** Queues an insert for the next group commit; resolves after that commit. */
function insertGrouped(channelId: string, body: string): Promise<Row> {
  return new Promise((resolve) => {
    if (queue.length === 0) setImmediate(flush)
    queue.push({ channelId, body, resolve })
  })
}

const json = (status: number, value: unknown) =>
  new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8' },
  })

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(flag('port') ?? 0),
  async fetch(request) {
    const url = request.url
    const path = url.slice(url.indexOf('/', 8)).split('?')[0]
    if (path === '/health') return json(200, { ok: true })
    if (path !== '/v1/messages' || request.method !== 'POST') {
      return json(404, { error: 'not found' })
    }
    const m = /^Bearer\s+(\S+)$/.exec(request.headers.get('authorization') ?? '')
    if (!m) return json(401, { error: 'missing token' })
    const hash = new Uint8Array(
      createHash('sha256')
        .update(m[1] as string)
        .digest(),
    )
    const token = tokenByHash.get(hash)
    if (token?.kind !== 'agent' || !token.channel_id) {
      return json(401, { error: 'invalid token' })
    }
    const channel = channelById.get(token.channel_id)
    if (!channel) return json(401, { error: 'invalid token' })
    let parsed: { body?: unknown }
    try {
      parsed = (await request.json()) as { body?: unknown }
    } catch {
      return json(400, { error: 'request body is not valid JSON' })
    }
    if (typeof parsed?.body !== 'object' || parsed.body === null) {
      return json(400, { error: 'body: is required' })
    }
    const row = GROUP_COMMIT
      ? await insertGrouped(channel.id, JSON.stringify(parsed.body))
      : insertMessage.immediate(channel.id, JSON.stringify(parsed.body))
    return json(200, {
      message: {
        id: row?.id,
        channel_id: row?.channel_id,
        sender: 'agent',
        created_at: row?.created_at,
        updated_at: row?.created_at,
        body: parsed.body,
      },
    })
  },
})
console.log(`bare server${GROUP_COMMIT ? ' (group commit)' : ''} listening on ${server.url.href}`)
process.once('SIGTERM', () => {
  server.stop(true)
  db.close()
  process.exit(0)
})
