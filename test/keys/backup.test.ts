import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { backup, restore } from '../../src/cli/admin/backup.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'
import { type FreshServer, ORIGIN, startFreshServer } from '../passkeys/fixture.ts'

/**
 * Backups leave the server keys out (docs/decisions.md, "Server keys"): what a backup holds
 * sealed (a ceremony's setup token or invite, email codes' hashes) stays sealed for whoever
 * reads it. A restored server makes new keys; a ceremony in flight at the backup starts again.
 */
let s: FreshServer | undefined
let restored: TestServer | undefined
const work = tempDir('hark-keys-backup-')
afterEach(async () => {
  await restored?.close()
  restored = undefined
  await s?.close()
  s = undefined
})
process.on('exit', () => rmSync(work, { recursive: true, force: true }))

describe('backups and the server keys', () => {
  test('a backup holds no key; a restored server makes new ones, and ceremonies start again', async () => {
    s = await startFreshServer()
    const token = await s.setupToken()
    const started = await s.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: token },
    })
    expect(started.status).toBe(200)
    const keys = await s.ctx.store.serverKeys.all()
    expect(keys.length).toBeGreaterThan(0)

    const archive = join(work, 'backup.tar')
    await backup(s.dir, archive)
    const bytes = readFileSync(archive)
    for (const k of keys) expect(bytes.includes(Buffer.from(k.key))).toBe(false)
    expect(bytes.includes(Buffer.from(token))).toBe(false)
    // The live data keeps its keys: only the copy lost them.
    expect(await s.ctx.store.serverKeys.all()).toEqual(keys)

    const dir = join(work, 'restored')
    await restore(archive, dir)
    const copy = new Database(join(dir, 'hark.db'), { readonly: true })
    expect(copy.query('SELECT count(*) AS n FROM server_keys').get()).toEqual({ n: 0 })
    expect(copy.query('SELECT count(*) AS n FROM challenges').get()).toEqual({ n: 1 })
    copy.close()

    restored = await startTestServer({
      owner: false,
      baseUrl: ORIGIN,
      clock: s.clock,
      dataDir: dir,
    })
    const fresh = await restored.ctx.store.serverKeys.all()
    expect(fresh.map((k) => k.purpose).sort()).toEqual(keys.map((k) => k.purpose).sort())
    for (const k of fresh) {
      expect(keys.some((old) => Buffer.from(old.key).equals(Buffer.from(k.key)))).toBe(false)
    }
    // The ceremony in flight at the backup: its sealed data opens no more, so it is refused...
    const authenticator = s.authenticator()
    const response = await authenticator.register(started.body.options)
    const stale = await restored.request('POST', '/v1/auth/passkey/register/verify', {
      json: { challenge_id: started.body.challenge_id, response },
    })
    expect(stale.status).toBe(400)
    expect(stale.body.error).toContain('ask for new options')
    // ... and begun again, it succeeds (the setup token itself came back with the data).
    const again = await restored.request('POST', '/v1/auth/passkey/register/options', {
      json: { email: 'o@example.com', setup_token: token },
    })
    const done = await restored.request('POST', '/v1/auth/passkey/register/verify', {
      json: {
        challenge_id: again.body.challenge_id,
        response: await authenticator.register(again.body.options),
      },
    })
    expect(done.status).toBe(200)
    expect(done.body.user).toMatchObject({ email: 'o@example.com', is_owner: true })
  })
})
