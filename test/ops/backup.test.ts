import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { createAgentClient } from '../../src/agent/client.ts'
import { requireBinary, run, type Served, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'

/**
 * `hark admin backup` while `hark serve` takes writes (messages and file uploads), then
 * `hark admin restore`: the restored database passes integrity_check and is exactly the live
 * database as of one instant; its files match their checksums.
 */
const work = tempDir('hark-backup-')
const data = join(work, 'data')
let served: Served | undefined
let token = ''

const rows = (db: Database, table: string) =>
  db.query(`SELECT * FROM ${table} ORDER BY 1`).all() as Record<string, unknown>[]
/**
 * Every table, whatever the schema version, as sorted JSON lines; but the server keys, which a
 * backup leaves out (docs/decisions.md, "Server keys").
 */
const dump = (db: Database) =>
  (
    db
      .query(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'server_keys' ORDER BY name",
      )
      .all() as {
      name: string
    }[]
  ).map(({ name }) => ({
    name,
    rows: db
      .query(`SELECT * FROM "${name}"`)
      .all()
      .map((r) => JSON.stringify(r, (_, v) => (v instanceof Uint8Array ? [...v] : v)))
      .sort(),
  }))
const open = (path: string) => new Database(path, { readonly: true })
const sha = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex')

beforeAll(async () => {
  requireBinary()
  expect(
    (await run(['admin', 'user', 'add', 'me@example.com', '--owner', '--data', data])).code,
  ).toBe(0)
  const ch = await run(['admin', 'channel', 'add', '--user', 'me@example.com', '--data', data])
  token = ch.stdout.trim().split('\n').at(-1) as string
  served = await startServe(['--data', data, '--write-limit', '0'])
})
afterAll(() => {
  served?.proc.kill('SIGKILL')
  rmSync(work, { recursive: true, force: true })
})

function verifyRestored(dir: string) {
  const db = open(join(dir, 'hark.db'))
  expect(db.query('PRAGMA integrity_check').all()).toEqual([{ integrity_check: 'ok' }])
  expect(db.query('PRAGMA foreign_key_check').all()).toEqual([])
  for (const f of db.query('SELECT id, channel_id, size, sha256 FROM files').all() as {
    id: string
    channel_id: string
    sha256: string
  }[]) {
    expect(sha(join(dir, 'files', f.channel_id, f.id))).toBe(f.sha256)
  }
  return db
}

describe('backup under write load', () => {
  test('restores to a consistent, integrity-checked snapshot', async () => {
    const agent = createAgentClient({ baseUrl: (served as Served).url, token })
    let stop = false
    let sent = 0
    const writer = async (n: number) => {
      for (let i = 0; !stop; i++) {
        if (i % 5 === 0) {
          const bytes = new TextEncoder().encode(`file ${n}-${i} `.repeat(200 + i))
          await agent.upload(`f${n}-${i}.txt`, bytes, 'text/plain')
        } else {
          await agent.send({ body: { text: `message ${n}-${i}` } })
        }
        sent++
      }
    }
    const writers = [0, 1, 2, 3].map(writer)
    while (sent < 50) await Bun.sleep(10)
    const b1 = join(work, 'during.tar')
    const r = await run(['admin', 'backup', b1, '--data', data])
    const sentAtEnd = sent
    stop = true
    await Promise.all(writers)
    expect(r.stderr).toBe('')
    expect(r.code).toBe(0)
    expect(r.stdout).toContain('integrity ok')

    const restored = join(work, 'restored-during')
    const rr = await run(['admin', 'restore', b1, '--data', restored])
    expect(rr.code).toBe(0)
    expect(rr.stdout).toContain('integrity and checksums verified')
    const snap = verifyRestored(restored)
    const live = open(join(data, 'hark.db'))
    // One instant: the restored messages are exactly the live ones up to the snapshot's
    // change counter (nothing later, nothing missing), and its files are live files.
    const counter = (
      snap.query("SELECT value FROM counters WHERE name = 'change_seq'").get() as {
        value: number
      }
    ).value
    const snapMessages = rows(snap, 'messages')
    expect(snapMessages.length).toBeGreaterThan(0)
    expect(snapMessages).toEqual(rows(live, 'messages').filter((m) => (m.seq as number) <= counter))
    const liveFiles = new Map(rows(live, 'files').map((f) => [f.id, f]))
    for (const f of rows(snap, 'files')) expect(liveFiles.get(f.id)).toEqual(f)
    expect(rows(snap, 'tokens').length).toBe(rows(live, 'tokens').length)
    snap.close()
    live.close()
    console.log(
      `backup during load: ${snapMessages.length} messages in the snapshot, ${sentAtEnd} writes by the end of the backup, ${sent} in all`,
    )
  }, 60_000)

  test('after the writes, a backup restores to an identical database and files', async () => {
    const b2 = join(work, 'after.tar')
    expect((await run(['admin', 'backup', b2, '--data', data])).code).toBe(0)
    const restored = join(work, 'restored-after')
    expect((await run(['admin', 'restore', b2, '--data', restored])).code).toBe(0)
    const snap = verifyRestored(restored)
    const live = open(join(data, 'hark.db'))
    expect(dump(snap)).toEqual(dump(live))
    expect(rows(live, 'server_keys').length).toBeGreaterThan(0)
    expect(rows(snap, 'server_keys')).toEqual([])
    for (const f of rows(live, 'files')) {
      const path = join('files', f.channel_id as string, f.id as string)
      expect(sha(join(restored, path))).toBe(sha(join(data, path)))
    }
    snap.close()
    live.close()
    // The push keys came along (0600): restored subscriptions stay valid.
    expect(readFileSync(join(restored, 'vapid.json'), 'utf8')).toBe(
      readFileSync(join(data, 'vapid.json'), 'utf8'),
    )
    expect(statSync(join(restored, 'vapid.json')).mode & 0o777).toBe(0o600)
    // The restored directory serves: same feed.
    const again = await startServe(['--data', restored])
    try {
      const a = createAgentClient({ baseUrl: again.url, token })
      const b = createAgentClient({ baseUrl: (served as Served).url, token })
      expect((await a.feed({ since: 0, limit: 200, peek: true })).messages).toEqual(
        (await b.feed({ since: 0, limit: 200, peek: true })).messages,
      )
      const info = async (url: string) =>
        ((await (await fetch(`${url}/v1/info`)).json()) as { vapid_public_key: string })
          .vapid_public_key
      expect(await info(again.url)).toBe(await info((served as Served).url))
    } finally {
      again.proc.kill('SIGTERM')
      await again.proc.exited
    }
  }, 60_000)
})

describe('restore refuses', () => {
  test('a data directory that is not empty', async () => {
    const r = await run(['admin', 'restore', join(work, 'after.tar'), '--data', data])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('is not empty')
  })

  test('a damaged archive, leaving the directory empty', async () => {
    const bytes = readFileSync(join(work, 'after.tar'))
    // Flip a byte inside the first stored file's content (after hark.db).
    const marker = bytes.indexOf(Buffer.from('file 0-0 '))
    expect(marker).toBeGreaterThan(0)
    bytes[marker] = 'F'.charCodeAt(0)
    const bad = join(work, 'bad.tar')
    writeFileSync(bad, bytes)
    const target = join(work, 'restored-bad')
    mkdirSync(target)
    const r = await run(['admin', 'restore', bad, '--data', target])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('does not match its checksum in the manifest')
    expect(readdirSync(target)).toEqual([])
  })

  test('something that is not a backup', async () => {
    const junk = join(work, 'junk.tar')
    writeFileSync(junk, 'hello')
    const r = await run(['admin', 'restore', junk, '--data', join(work, 'restored-junk')])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('is not a readable Hark backup')
  })

  test('backup will not overwrite a file', async () => {
    const r = await run(['admin', 'backup', join(work, 'after.tar'), '--data', data])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain('already exists')
    expect(existsSync(join(work, 'after.tar'))).toBe(true)
  })
})

describe('scheduled backups: --dir and --keep', () => {
  test('names each by its UTC time in a folder it makes, keeps the newest N, leaves other files', async () => {
    const dir = join(work, 'scheduled', 'backups')
    mkdirSync(dir, { recursive: true })
    // Made by hand or by the installer: never the schedule's to remove.
    writeFileSync(join(dir, 'pre-upgrade-20250101T000000Z.tar'), 'x')
    writeFileSync(join(dir, 'mine.tar'), 'x')
    // Three older scheduled ones.
    for (const stamp of ['20240101T000000Z', '20240102T000000Z', '20240103T000000Z']) {
      writeFileSync(join(dir, `hark-${stamp}.tar`), 'old')
    }
    const r = await run(['admin', 'backup', '--dir', dir, '--keep', '2', '--data', data])
    expect(r.code).toBe(0)
    const made = readdirSync(dir)
      .filter((n) => /^hark-\d{8}T\d{6}Z\.tar$/.test(n))
      .sort()
    expect(made).toHaveLength(2)
    expect(made[0]).toBe('hark-20240103T000000Z.tar')
    expect(r.stdout).toContain(`Backed up ${data} to ${join(dir, made[1] as string)}`)
    expect(r.stdout).toContain('Removed the older backup')
    expect(readdirSync(dir)).toContain('pre-upgrade-20250101T000000Z.tar')
    expect(readdirSync(dir)).toContain('mine.tar')
    // The new one restores like any backup.
    const target = join(work, 'restored-scheduled')
    const back = await run(['admin', 'restore', join(dir, made[1] as string), '--data', target])
    expect(back.code).toBe(0)
  }, 60_000)

  test('a FILE in a folder that does not exist yet (a fresh install has no backups folder)', async () => {
    const file = join(work, 'fresh', 'backups', 'first.tar')
    const r = await run(['admin', 'backup', file, '--data', data])
    expect(r.code).toBe(0)
    expect(statSync(join(work, 'fresh', 'backups')).mode & 0o777).toBe(0o700)
    expect(existsSync(file)).toBe(true)
  })

  test('usage errors: --keep without --dir, FILE with --dir, a bad count', async () => {
    const a = await run(['admin', 'backup', join(work, 'x.tar'), '--keep', '2', '--data', data])
    expect(a.code).toBe(2)
    expect(a.stderr).toContain('--keep goes with --dir')
    const b = await run(['admin', 'backup', join(work, 'y.tar'), '--dir', work, '--data', data])
    expect(b.code).toBe(2)
    expect(b.stderr).toContain('not both')
    const c = await run(['admin', 'backup', '--dir', work, '--keep', '0', '--data', data])
    expect(c.code).toBe(2)
    expect(c.stderr).toContain('--keep must be a whole number')
  })
})
