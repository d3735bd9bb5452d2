import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SQL } from 'bun'
import { withDatabase } from '../../src/cli/admin/command.ts'
import { addChannel, addPersonToken, addUser } from '../../src/people/service.ts'
import { requireBinary, type Served, startServe } from '../binary/process.ts'
import { tempDir } from '../harness.ts'
import { type PgCluster, postgresBin, skipWithoutPostgres, startCluster } from './cluster.ts'

/**
 * Backups in Postgres mode as docs/scaling.md ("Backups in Postgres mode") says to make them:
 * `pg_dump --format=custom --exclude-table-data=server_keys` while an instance runs, then
 * `pg_restore` into a new database and an instance started on it. Debian's own pg_dump and
 * pg_restore, against a throwaway cluster, and the real binary.
 */
const skip = skipWithoutPostgres()

let cluster: PgCluster
let source: string
let agent: string
let person: string
const servers: Served[] = []

async function pgTool(name: string, args: string[]): Promise<void> {
  const proc = Bun.spawn([join(postgresBin() as string, name), ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 60_000,
  })
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${name} exited ${code}: ${stderr}`)
}

const serveOn = async (url: string) => {
  const served = await startServe(['--data', tempDir('hark-bk-')], {
    HARK_CONFIG: '/dev/null',
    HARK_DATABASE_URL: url,
  })
  servers.push(served)
  return served
}

const texts = async (at: Served, token: string): Promise<string[]> => {
  const res = await fetch(`${at.url}/v1/app/feed?since=0&limit=200`, {
    headers: { authorization: `Bearer ${token}` },
  })
  const body = (await res.json()) as { messages: { body: { text: string } }[] }
  return body.messages.map((m) => m.body.text)
}

const send = async (at: Served, text: string) =>
  await fetch(`${at.url}/v1/messages`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' },
    body: JSON.stringify({ body: { text } }),
  })

describe.skipIf(skip)('backing up a Postgres deployment with pg_dump', () => {
  beforeAll(async () => {
    requireBinary()
    cluster = await startCluster()
    source = await cluster.database('live')
    const made = await withDatabase(
      tempDir('hark-admin-'),
      async (p) => {
        await addUser(p, { email: 'owner@example.com', owner: true })
        const { token } = await addChannel(p, { email: 'owner@example.com' })
        return { token, person: (await addPersonToken(p, { email: 'owner@example.com' })).token }
      },
      source,
    )
    agent = made.token
    person = made.person
  }, 60_000)

  afterAll(async () => {
    for (const s of servers) s.proc.kill()
    await Promise.all(servers.map((s) => s.proc.exited))
    await cluster?.close()
  })

  test('a dump taken while serving restores into a database a new instance serves on', async () => {
    const live = await serveOn(source)
    for (const text of ['one', 'two', 'three']) expect((await send(live, text)).status).toBe(200)
    const dump = join(tempDir('hark-dump-'), 'hark.dump')
    await pgTool('pg_dump', [
      '--format=custom',
      '--exclude-table-data=server_keys',
      `--file=${dump}`,
      source,
    ])
    // Written after the dump: not in the restored copy.
    expect((await send(live, 'after the dump')).status).toBe(200)

    const restored = await cluster.database('restored')
    await pgTool('pg_restore', ['--no-owner', `--dbname=${restored}`, dump])
    const keys = new SQL(restored, { max: 1 })
    try {
      const [row] = await keys`SELECT count(*) AS n FROM server_keys`
      expect(Number(row.n)).toBe(0)
      const [vapid] = await keys`SELECT count(*) AS n FROM vapid_keys`
      expect(Number(vapid.n)).toBe(1)
    } finally {
      await keys.close()
    }

    const back = await serveOn(restored)
    expect(await texts(back, person)).toEqual(['one', 'two', 'three'])
    // The same tokens, the numbering continued: a new write lands after the restored ones.
    expect((await send(back, 'four')).status).toBe(200)
    expect(await texts(back, person)).toEqual(['one', 'two', 'three', 'four'])
    const info = async (at: Served) =>
      ((await (await fetch(`${at.url}/v1/info`)).json()) as { vapid_public_key: string })
        .vapid_public_key
    // The VAPID pair came with the dump: devices subscribed before keep receiving pushes.
    expect(await info(back)).toBe(await info(live))
  }, 120_000)
})
