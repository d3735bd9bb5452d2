import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { SQL } from 'bun'
import webpush from 'web-push'
import { admin } from '../../src/cli/admin/index.ts'
import { migratePostgres } from '../../src/db/pg/migrate.ts'
import {
  loadOrCreateVapid,
  readVapidIn,
  rotateVapidIn,
  VapidHolder,
  validVapid,
  vapidFile,
} from '../../src/push/vapid.ts'
import { PushWorker } from '../../src/push/worker.ts'
import { tempDir } from '../harness.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

// The VAPID pair shared by instances on one Postgres (issue 20): holders on pools of their own
// stand for instances. No test asserts a duration; a background re-read is waited for (bounded),
// never slept for.
const skip = skipWithoutPostgres()

/** Waits for `cond`, polling; a bounded wait, never an assertion about time. */
async function until(cond: () => boolean, ms = 10_000): Promise<void> {
  const deadline = performance.now() + ms
  while (!cond()) {
    if (performance.now() > deadline) throw new Error('condition not reached in time')
    await Bun.sleep(5)
  }
}

/** The `k=` (public key) of a VAPID Authorization header. */
const keyOf = (authorization: string) => /, k=([A-Za-z0-9_-]+)$/.exec(authorization)?.[1]

const ENDPOINT = 'https://push.example.com/send/abc'
const SUBJECT = 'mailto:ops@example.com'
/** So long that only `refresh()` re-reads within a test. */
const NEVER = 3_600_000

describe.skipIf(skip)('VAPID keys on Postgres', () => {
  let cluster: PgCluster
  const closers: (() => unknown)[] = []
  const pool = (url: string) => {
    const sql = new SQL(url, { max: 2 })
    closers.push(() => sql.close({ timeout: 0 }))
    return sql
  }
  const holder = async (sql: SQL, refreshMs = NEVER) => {
    const h = await VapidHolder.fromDatabase(sql, { refreshMs })
    closers.push(() => h.close())
    return h
  }
  /** A migrated database and two pools on it: two instances. */
  async function instances(name: string): Promise<[SQL, SQL, string]> {
    const url = await cluster.database(name)
    const a = pool(url)
    const b = pool(url)
    await migratePostgres(a)
    return [a, b, url]
  }

  beforeAll(async () => {
    cluster = await startCluster()
  }, 60_000)
  afterAll(async () => {
    for (const close of closers.reverse()) await close()
    await cluster?.close()
  }, 60_000)

  test('two instances starting together agree on one pair, the row, and it signs', async () => {
    const [a, b] = await instances('together')
    expect(await readVapidIn(a)).toBeUndefined()
    const [ha, hb] = await Promise.all([holder(a), holder(b)])
    const row = await readVapidIn(a)
    expect(ha.current()).toEqual(row as NonNullable<typeof row>)
    expect(hb.current()).toEqual(ha.current())
    expect(Number((await a`SELECT count(*) AS n FROM vapid_keys`)[0].n)).toBe(1)
    // created_at is BIGINT, which Bun.sql hands back as a string: the holder gives a number.
    expect(typeof ha.current().created_at).toBe('number')
    expect(ha.current().created_at).toBeGreaterThan(Date.UTC(2024, 0, 1))
    // A valid P-256 pair: web-push signs with it, and the header names the public key.
    const { publicKey, privateKey } = ha.current()
    expect(validVapid(ha.current())).toBe(true)
    expect(() =>
      webpush.getVapidHeaders(
        'https://push.example.com',
        SUBJECT,
        publicKey,
        privateKey,
        'aes128gcm',
      ),
    ).not.toThrow()
    expect(keyOf(ha.authorization(ENDPOINT, SUBJECT))).toBe(publicKey)
    expect(keyOf(hb.authorization(ENDPOINT, SUBJECT))).toBe(publicKey)
    // Another instance starting later takes the pair there, and makes none.
    expect((await holder(b)).current()).toEqual(ha.current())
    expect(Number((await a`SELECT count(*) AS n FROM vapid_keys`)[0].n)).toBe(1)
  })

  test('a rotation through one instance reaches the other at its next re-read, and not before', async () => {
    const [a, b] = await instances('rotation')
    const ha = await holder(a)
    const hb = await holder(b)
    const old = hb.current()
    expect(keyOf(hb.authorization(ENDPOINT, SUBJECT))).toBe(old.publicKey)
    const rotated = await rotateVapidIn(a)
    expect(rotated.publicKey).not.toBe(old.publicKey)
    expect(await readVapidIn(b)).toEqual(rotated)
    // Nothing re-read yet: both still hold, and sign with, the old pair.
    expect(hb.current()).toEqual(old)
    expect(await ha.refresh()).toEqual(rotated)
    expect(ha.current()).toEqual(rotated)
    expect(await hb.refresh()).toEqual(rotated)
    // The header signed with the old pair is not reused after the change.
    expect(keyOf(hb.authorization(ENDPOINT, SUBJECT))).toBe(rotated.publicKey)
    // Re-reads asked for together share one query and agree.
    const both = await Promise.all([hb.refresh(), hb.refresh()])
    expect(both).toEqual([rotated, rotated])
  })

  test('without being asked, a holder re-reads the row every refreshMs', async () => {
    const [a, b] = await instances('background')
    const hb = await holder(b, 20)
    const rotated = await rotateVapidIn(a)
    await until(() => hb.current().publicKey === rotated.publicKey)
    expect(hb.current()).toEqual(rotated)
    // A deleted row is made again at the next read (as at first start), not left missing.
    await a`DELETE FROM vapid_keys`
    await until(() => hb.current().publicKey !== rotated.publicKey)
    expect(await readVapidIn(a)).toEqual(hb.current())
    hb.close()
    hb.close() // safe twice
  })

  test('rotateVapidIn makes the row when there is none', async () => {
    const [a] = await instances('rotate_first')
    const made = await rotateVapidIn(a)
    expect(validVapid(made)).toBe(true)
    expect(await readVapidIn(a)).toEqual(made)
    expect((await holder(a)).current()).toEqual(made)
  })

  test('the push worker uses the holder it is given, else vapid.json', async () => {
    const [a] = await instances('worker')
    const h = await holder(a, 20)
    const dir = join(tempDir('hark-vapid-worker-'), 'data')
    mkdirSync(dir)
    const worker = new PushWorker(dir, h)
    expect(worker.vapid).toBe(h)
    expect(existsSync(vapidFile(dir))).toBe(false) // no file made beside the database's pair
    worker.stop()
    // Without a holder, the data directory's vapid.json, as before.
    const onFile = new PushWorker(dir)
    expect(onFile.vapid.current()).toEqual(loadOrCreateVapid(dir))
    expect(await onFile.vapid.refresh()).toEqual(loadOrCreateVapid(dir))
    onFile.stop()
  })

  test('hark admin vapid rotate --database-url rotates the shared pair and drops every device', async () => {
    const [a, , url] = await instances('admin_rotate')
    const ha = await holder(a)
    const old = ha.current()
    await a`INSERT INTO users (id, email, created_at) VALUES ('u1', 'p@example.com', 1)`
    await a`INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, created_at)
            VALUES ('s1', 'u1', ${ENDPOINT}, 'k', 'a', 1), ('s2', 'u1', ${`${ENDPOINT}2`}, 'k', 'a', 1)`
    const dir = join(tempDir('hark-vapid-admin-'), 'data')
    mkdirSync(dir)
    const fileKeys = loadOrCreateVapid(dir)
    const lines: string[] = []
    const code = await admin(['vapid', 'rotate', '--data', dir], { HARK_DATABASE_URL: url }, (l) =>
      lines.push(l),
    )
    expect(code).toBe(0)
    const said = lines.join('\n')
    expect(said).toContain('drops every push subscription')
    expect(said).toContain('(vapid_keys); dropped 2 subscriptions')
    expect(said).not.toContain(dir)
    const rotated = await readVapidIn(a)
    expect(rotated?.publicKey).not.toBe(old.publicKey)
    expect(validVapid(rotated)).toBe(true)
    expect(Number((await a`SELECT count(*) AS n FROM push_subscriptions`)[0].n)).toBe(0)
    expect(await ha.refresh()).toEqual(rotated as NonNullable<typeof rotated>)
    // The data directory's file is not what the instances use: left as it was.
    expect(JSON.parse(readFileSync(vapidFile(dir), 'utf8'))).toEqual(fileKeys)
    // --database-url does the same.
    const again = await admin(
      ['vapid', 'rotate', '--data', dir, '--database-url', url],
      {},
      () => {},
    )
    expect(again).toBe(0)
    expect((await readVapidIn(a))?.publicKey).not.toBe(rotated?.publicKey)
  })

  test('on a database without the schema, vapid rotate refuses, naming the setting', async () => {
    const url = await cluster.database('no_schema')
    const dir = join(tempDir('hark-vapid-admin-'), 'data')
    mkdirSync(dir)
    const lines: string[] = []
    const run = admin(['vapid', 'rotate', '--data', dir], { HARK_DATABASE_URL: url }, (l) =>
      lines.push(l),
    )
    await expect(run).rejects.toThrow('is at schema 0')
    await expect(run).rejects.toThrow('HARK_DATABASE_URL')
    expect(lines).toEqual([])
    expect(existsSync(vapidFile(dir))).toBe(false)
  })
})
