import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import { recordTables } from '../../src/cli/admin/pg-copy.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import { readVapidIn, vapidFile } from '../../src/push/vapid.ts'
import { requireBinary, run, startServe } from '../binary/process.ts'
import { startS3, type TestS3 } from '../files/s3-fixture.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// `hark admin migrate-to` (issue 20): a data directory written by a real server, copied by the
// real binary into a throwaway Postgres cluster, compared there row by row with the SQLite file.
const skip = skipWithoutPostgres()

/** A value as both engines can agree on: Postgres' int8 comes back as a string, bytea as a Buffer. */
const plain = (v: unknown): unknown =>
  v instanceof Uint8Array ? Buffer.from(v).toString('hex') : typeof v === 'bigint' ? Number(v) : v

/** Every row of a table as sorted JSON lines, each row's keys sorted. */
function lines(rows: Record<string, unknown>[], numeric: Set<string>): string[] {
  return rows
    .map((row) =>
      JSON.stringify(
        Object.keys(row)
          .sort()
          .map((k) => [k, numeric.has(k) && row[k] !== null ? Number(row[k]) : plain(row[k])]),
      ),
    )
    .sort()
}

describe.skipIf(skip)('hark admin migrate-to', () => {
  let cluster: PgCluster
  let s: TestServer
  let s3: TestS3
  const clients: SQL[] = []
  const connect = (url: string) => {
    const sql = new SQL(url, { max: 2 })
    clients.push(sql)
    return sql
  }
  const migrateTo = (url: string, data = s.dir, more: string[] = []) =>
    run(['admin', 'migrate-to', '--database-url', url, '--data', data, ...more], {}, 60_000)
  const files = () =>
    new Database(join(s.dir, 'hark.db'), { readonly: true })
      .query<{ id: string; channel_id: string; sha256: string }, []>('SELECT * FROM files')
      .all()

  beforeAll(async () => {
    requireBinary()
    cluster = await startCluster()
    s3 = await startS3()
    // A data directory with something in most tables, written through the API.
    s = await startTestServer()
    const ask = await s.agent.send({
      body: { text: 'Which region?', blocks: [{ type: 'text_input', id: 'r', label: 'Region' }] },
    })
    await s.person.answer(ask.message.id, 'antarctica please')
    await s.agent.send({ body: { text: 'a message with ünïcode and "quotes"' } })
    await s.agent.pin('build', { body: { title: 'Build', text: 'running' } })
    await s.agent.upload('report.bin', new Uint8Array([0, 1, 2, 255]), 'application/octet-stream')
    await s.agent.upload('notes.txt', 'x'.repeat(300_000), 'text/plain')
    await s.person.send(s.channelId, { text: 'from the person' })
    const other = await s.addChannel('second agent', 'second@example.com')
    await other.agent.send({ body: { text: 'another person, another channel' } })
    await s.session()
    await s.stop()
  }, 60_000)
  afterAll(async () => {
    for (const c of clients) await c.close({ timeout: 0 })
    await s?.close()
    await s3?.close()
    await cluster?.close()
  }, 60_000)

  test('copies every table row for row, the counts verified, and search works there', async () => {
    const url = await cluster.database('copy')
    const done = await migrateTo(url)
    expect(done.stderr).toBe('')
    expect(done.code).toBe(0)
    expect(done.stdout).toContain("every table's count verified")
    const db = new Database(join(s.dir, 'hark.db'), { readonly: true })
    const sql = connect(url)
    let records = 0
    for (const table of recordTables(db)) {
      const numeric = new Set<string>(
        (
          await sql`SELECT column_name FROM information_schema.columns
                    WHERE table_name = ${table} AND data_type = 'bigint'`
        ).map((c: { column_name: string }) => c.column_name),
      )
      const before = lines(
        db.query<Record<string, unknown>, []>(`SELECT * FROM "${table}"`).all(),
        numeric,
      )
      const after = lines(await sql`SELECT * FROM ${sql(table)}`, numeric)
      expect({ table, rows: after }).toEqual({ table, rows: before })
      expect(done.stdout).toContain(`  ${table}: ${before.length}\n`)
      records += before.length
    }
    expect(done.stdout).toContain(`Copied ${records} records`)
    for (const table of ['users', 'channels', 'tokens', 'messages', 'files', 'sessions']) {
      const [row] = await sql`SELECT count(*) AS n FROM ${sql(table)}`
      expect({ table, n: Number(row.n) }).not.toEqual({ table, n: 0 })
    }
    // Numbering goes on after the copied rows, as SQLite's rowid would.
    const [seq] = await sql`SELECT last_value FROM ${sql(
      (await sql`SELECT pg_get_serial_sequence('messages', 'rid') AS s`)[0].s,
    )}`
    const [max] = await sql`SELECT max(rid) AS m FROM messages`
    expect(Number(seq.last_value)).toBe(Number(max.m))
    // Postgres' search index was built as the messages arrived.
    const found = await sql`SELECT m.id FROM message_search s JOIN messages m USING (rid)
                            WHERE s.document @@ to_tsquery('simple', 'antarctica')`
    expect(found.map((r: { id: string }) => r.id)).toEqual([
      db.query<{ id: string }, []>("SELECT id FROM messages WHERE answer LIKE '%antarctica%'").get()
        ?.id,
    ])
    db.close()
    // The push signing keys arrive unchanged: devices subscribed before the move still accept
    // what the instances sign.
    expect(await readVapidIn(sql)).toEqual(JSON.parse(readFileSync(vapidFile(s.dir), 'utf8')))
    expect(done.stdout).toContain(
      'Copied the web push (VAPID) keys from vapid.json into vapid_keys',
    )
  }, 60_000)

  test('without vapid.json no pair is copied: the first instance makes one', async () => {
    const url = await cluster.database('no_vapid')
    const file = vapidFile(s.dir)
    const aside = `${file}.aside`
    renameSync(file, aside)
    try {
      const done = await migrateTo(url)
      expect(done.stderr).toBe('')
      expect(done.code).toBe(0)
      expect(done.stdout).toContain('No vapid.json to copy')
      expect(existsSync(file)).toBe(false) // the copy made none
      expect(await readVapidIn(connect(url))).toBeUndefined()
    } finally {
      renameSync(aside, file)
    }
  }, 60_000)

  test('a pair an instance made in the empty database gives way to the copied one', async () => {
    const url = await cluster.database('vapid_there')
    const sql = connect(url)
    await migratePostgres(sql)
    await sql`INSERT INTO vapid_keys (id, public_key, private_key, created_at)
              VALUES (1, 'made-by-an-instance', 'its-private-key', 1)`
    const done = await migrateTo(url)
    expect(done.code).toBe(0)
    expect(await readVapidIn(sql)).toEqual(JSON.parse(readFileSync(vapidFile(s.dir), 'utf8')))
  }, 60_000)

  test('with --s3-url, every file goes into the bucket, its bytes checked, then the records', async () => {
    const url = await cluster.database('with_files')
    const done = await migrateTo(url, s.dir, ['--s3-url', s3.url('moved')])
    expect(done.stderr).toBe('')
    expect(done.code).toBe(0)
    const held = files()
    expect(held).toHaveLength(2)
    expect(done.stdout).toContain(`Copied 2 files (0.3 MiB) into http://127.0.0.1:${s3.port}/`)
    expect(done.stdout).not.toContain('S3RVER') // the key and secret are never shown
    for (const f of held) {
      const bytes = await s3.client.file(`moved/${f.channel_id}/${f.id}`).bytes()
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(f.sha256)
    }
    expect(Number((await connect(url)`SELECT count(*) AS n FROM files`)[0].n)).toBe(2)
    // And an instance started on the two serves what the data directory did, to the same
    // tokens: the messages from their cursor 0, the files' bytes from the bucket.
    const served = await startServe(['--data', tempDir('hark-moved-')], {
      HARK_CONFIG: '/dev/null',
      HARK_DATABASE_URL: url,
      HARK_S3_URL: s3.url('moved'),
    })
    try {
      const auth = { authorization: `Bearer ${s.agentToken}` }
      const feed = (await (
        await fetch(`${served.url}/v1/messages?since=0`, { headers: auth })
      ).json()) as {
        messages: { body: { text?: string } }[]
      }
      expect(feed.messages.map((m) => m.body.text)).toContain('a message with ünïcode and "quotes"')
      const report = held.find(
        (f) =>
          f.sha256 ===
          createHash('sha256')
            .update(new Uint8Array([0, 1, 2, 255]))
            .digest('hex'),
      )
      const bytes = await fetch(`${served.url}/v1/files/${report?.id}`, { headers: auth })
      expect(bytes.status).toBe(200)
      expect(new Uint8Array(await bytes.arrayBuffer())).toEqual(new Uint8Array([0, 1, 2, 255]))
    } finally {
      served.proc.kill()
      await served.proc.exited
    }
  }, 60_000)

  test('a file whose bytes are not what its record says stops the copy before any record', async () => {
    const url = await cluster.database('bad_file')
    const [f] = files()
    if (!f) throw new Error('no file')
    const path = join(s.dir, 'files', f.channel_id, f.id)
    const good = readFileSync(path)
    writeFileSync(path, Buffer.from(good).fill(7))
    try {
      const failed = await migrateTo(url, s.dir, ['--s3-url', s3.url('bad')])
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain(
        `${f.channel_id}/${f.id}: the bytes do not match the expected SHA-256`,
      )
      expect(Number((await connect(url)`SELECT count(*) AS n FROM users`)[0].n)).toBe(0)
      expect((await s3.keys()).filter((k) => k === `bad/${f.channel_id}/${f.id}`)).toEqual([])
    } finally {
      writeFileSync(path, good)
    }
  }, 60_000)

  test('a database that already holds records is refused, and nothing is added', async () => {
    const url = await cluster.database('twice')
    expect((await migrateTo(url)).code).toBe(0)
    const sql = connect(url)
    const count = async () => Number((await sql`SELECT count(*) AS n FROM messages`)[0].n)
    const before = await count()
    const again = await migrateTo(url)
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('already holds records (in ')
    expect(again.stderr).toContain('copies into an empty database only')
    expect(await count()).toBe(before)
  }, 60_000)

  test('a failure part way leaves Postgres without any record', async () => {
    const url = await cluster.database('halfway')
    const sql = connect(url)
    // The schema first, then a constraint no message meets: users and channels are copied
    // before messages, and must be rolled back with them.
    await migratePostgres(sql)
    await sql.unsafe('ALTER TABLE messages ADD CONSTRAINT no_messages CHECK (false) NOT VALID')
    const failed = await migrateTo(url)
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain('no_messages')
    expect(Number((await sql`SELECT count(*) AS n FROM users`)[0].n)).toBe(0)
    expect(Number((await sql`SELECT count(*) AS n FROM channels`)[0].n)).toBe(0)
    expect(await readVapidIn(sql)).toBeUndefined() // the keys go with the records, or not at all
    // The seeded counter is back as the migration left it: the deletion rolled back too.
    expect(await sql`SELECT name, value FROM counters`).toEqual([
      { name: 'change_seq', value: '0' },
    ])
  }, 60_000)

  test('an unreachable server is a clear error that never shows the password', async () => {
    const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const port = probe.port
    probe.stop(true) // nothing listens there now
    const failed = await migrateTo(`postgres://hark:s3cret-pw@127.0.0.1:${port}/hark`)
    expect(failed.code).toBe(1)
    expect(failed.stderr).toContain(`cannot use postgres://hark:***@127.0.0.1:${port}/hark`)
    expect(failed.stderr).not.toContain('s3cret-pw')
    expect(failed.stdout).toBe('')
  }, 60_000)

  test('a missing or malformed URL, or a directory without a database, is a usage error', async () => {
    const missing = await run(['admin', 'migrate-to', '--data', s.dir], { HARK_DATABASE_URL: '' })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('needs --database-url (or HARK_DATABASE_URL)')
    for (const [url, why] of [
      ['mysql://u:p@host/db', 'it must start with postgres://'],
      ['postgres://u:p@host', 'it names no database'],
      ['postgres://u:p@host/db?ssl=1', 'unknown parameter "ssl"'],
      ['not a url', 'it is not a URL'],
    ]) {
      const bad = await migrateTo(url as string)
      expect({ url, code: bad.code }).toEqual({ url, code: 2 })
      expect(bad.stderr).toContain(`--database-url: ${why}`)
      expect(bad.stderr).not.toContain(':p@')
    }
    const empty = join(tempDir('hark-migrate-to-'), 'data')
    mkdirSync(empty)
    const none = await migrateTo(await cluster.database('none'), empty)
    expect(none.code).toBe(2)
    expect(none.stderr).toContain('holds no Hark database')
  }, 60_000)
})

describe('HARK_DATABASE_URL and hark serve', () => {
  test('serve on an unreachable database stops with the reason, before it listens, password hidden', async () => {
    requireBinary()
    const data = join(tempDir('hark-db-url-'), 'data')
    const refused = await run(['serve', '--port', '0', '--data', data], {
      HARK_DATABASE_URL: 'postgres://hark:pw-not-shown@127.0.0.1:1/hark',
    })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('cannot use postgres://hark:***@127.0.0.1:1/hark')
    expect(refused.stderr).not.toContain('pw-not-shown')
    expect(refused.stderr).not.toContain('listening')
  })

  test('--print-config masks it, and a malformed one is a usage error naming the flag', async () => {
    requireBinary()
    const shown = await run(['serve', '--print-config'], {
      HARK_DATABASE_URL: 'postgres://hark:pw-not-shown@db.lan/hark',
    })
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain('HARK_DATABASE_URL=********  # env')
    expect(shown.stdout).not.toContain('pw-not-shown')
    const bad = await run(['serve', '--print-config', '--database-url', 'mysql://u:pw@h/db'])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--database-url: it must start with postgres://')
    expect(bad.stderr).not.toContain('pw')
  })
})
