import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BackupError, backup, restore } from '../../src/cli/admin/backup.ts'
import { vapidFile } from '../../src/push/vapid.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'
import { type PushFixture, startPushServer } from './fixture.ts'

/**
 * Backups carry the VAPID keys: push services bind each subscription to the key it was made
 * with, so a restore that made new keys would leave every device refused (401/403) for good.
 */
let f: PushFixture | undefined
let restored: TestServer | undefined
const work = tempDir('hark-push-backup-')
afterEach(() => {
  restored?.close()
  restored = undefined
  f?.close()
  f = undefined
})
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

let n = 0
const fresh = (name: string) => join(work, `${name}-${++n}`)

/** `k=` of a VAPID Authorization header: the public key the push was signed with. */
const signedWith = (headers: Headers) =>
  /(?:^|,\s*)k=([A-Za-z0-9_-]+)/.exec(headers.get('authorization') ?? '')?.[1]

describe('backup and restore keep the VAPID keys', () => {
  test('after a restore, pushes to restored devices are signed with the same key and decrypt', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    const before = (await f.s.raw().info()).vapid_public_key
    const keysBefore = readFileSync(vapidFile(f.s.dir), 'utf8')
    const archive = fresh('backup.tar')
    const manifest = await backup(f.s.dir, archive)
    expect(manifest.format_version).toBe(2)
    expect(manifest.vapid).toMatchObject({ path: 'vapid.json', size: keysBefore.length })

    const dir = fresh('restored')
    await restore(archive, dir)
    expect(readFileSync(vapidFile(dir), 'utf8')).toBe(keysBefore)
    expect(statSync(vapidFile(dir)).mode & 0o777).toBe(0o600)

    restored = await startTestServer({ pushAllowHosts: ['127.0.0.1'], dataDir: dir })
    expect((await restored.raw().info()).vapid_public_key).toBe(before)
    expect(
      await restored.ctx.store.push.countByUser(
        (await restored.ctx.store.users.byEmail(restored.ownerEmail))?.id as string,
      ),
    ).toBe(1)
    await restored.agent.send({ body: { text: 'after the restore' } })
    const [got] = await f.receiver.waitFor(1)
    expect(got?.subscription).toBe('phone')
    expect(got?.payload.text).toBe('after the restore') // decrypted with the browser's keys
    expect(signedWith(got?.headers as Headers)).toBe(before)
  })

  test('a backup made before the server ever made keys restores without them', async () => {
    f = await startPushServer()
    unlinkSync(vapidFile(f.s.dir))
    const archive = fresh('nokeys.tar')
    const manifest = await backup(f.s.dir, archive)
    expect(manifest.vapid).toBeUndefined()
    const dir = fresh('restored-nokeys')
    await restore(archive, dir)
    expect(existsSync(vapidFile(dir))).toBe(false)
  })

  test('a backup without keys (older format) drops the subscriptions it restores', async () => {
    f = await startPushServer()
    await f.subscribe('phone')
    await f.subscribe('laptop')
    unlinkSync(vapidFile(f.s.dir))
    const archive = fresh('old.tar')
    await backup(f.s.dir, archive)
    const dir = fresh('restored-old')
    await restore(archive, dir)
    const db = new Database(join(dir, 'hark.db'), { readonly: true })
    expect(db.query('SELECT count(*) AS n FROM push_subscriptions').get()).toEqual({ n: 0 })
    db.close()
  })

  test('tampered keys fail the checksum and leave the directory empty', async () => {
    f = await startPushServer()
    const archive = fresh('tamper.tar')
    await backup(f.s.dir, archive)
    const bytes = readFileSync(archive)
    const { privateKey } = JSON.parse(readFileSync(vapidFile(f.s.dir), 'utf8'))
    const at = bytes.indexOf(Buffer.from(privateKey))
    expect(at).toBeGreaterThan(0)
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41
    writeFileSync(archive, bytes)
    const dir = fresh('restored-tampered')
    const error = await restore(archive, dir).catch((e) => e)
    expect(error).toBeInstanceOf(BackupError)
    expect((error as Error).message).toContain('vapid.json does not match its checksum')
    expect(existsSync(vapidFile(dir))).toBe(false)
  })
})
