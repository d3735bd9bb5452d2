// test-needs: postgres
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { databaseUrlSetting } from '../../src/db/pg/url.ts'
import { sendMessage } from '../../src/messages/service.ts'
import { closeContext } from '../../src/server/context.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * HARK_DATABASE_URL through Postgres' Unix-domain socket (issue 32 item 6, fourth pass): the
 * libpq form `?host=/socket/directory`, for a Postgres on the same machine. The setting takes
 * it, and an instance then talks to Postgres over the socket only: its pool and its wake bus
 * show in pg_stat_activity with no client address (TCP backends have one).
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('HARK_DATABASE_URL over a Unix socket', () => {
  const cluster = useCluster()

  test('the setting takes ?host= an absolute directory, and refuses a relative one by name', () => {
    const url = 'postgres://hark:pw@localhost:5433/hark?host=/run/postgresql'
    expect(databaseUrlSetting(url, 'database-url')).toBe(url)
    expect(() =>
      databaseUrlSetting('postgres://hark:pw@localhost/hark?host=run/pg', 'database-url'),
    ).toThrow('--database-url: host "run/pg" must be the absolute path of a socket\'s directory')
  })

  test('an instance on ?host=<socket directory> sends a message, every connection of it over the socket', async () => {
    const tcp = await cluster.database('over_socket')
    const made = await provisionOwner(tcp)
    const port = new URL(tcp).port
    const url = `postgres://postgres@localhost:${port}/over_socket?host=${encodeURIComponent(cluster.dir)}`
    expect(databaseUrlSetting(url, 'database-url')).toBe(url)
    const admin = new SQL(tcp, { max: 1 })
    const ctx = await pgInstance(url)
    try {
      const row = await sendMessage(ctx, made.channel, 'agent', { body: { text: 'hello' } })
      expect(row.seq).toBe(1)
      const [sent] = await admin`SELECT count(*)::int AS n FROM messages WHERE id = ${row.id}`
      expect(sent).toEqual({ n: 1 })
      // The instance's own connections (its pool and the wake bus's listener), by client address.
      const clients = await admin`SELECT client_addr, client_port FROM pg_stat_activity
        WHERE datname = 'over_socket' AND backend_type = 'client backend'
          AND pid <> pg_backend_pid()`
      expect(clients.length).toBeGreaterThan(0)
      for (const c of clients) expect(c).toEqual({ client_addr: null, client_port: -1 })
    } finally {
      await closeContext(ctx)
      await admin.close({ timeout: 0 })
    }
  }, 60_000)
})
