import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { withDatabase } from '../../src/cli/admin/command.ts'
import type { Logger } from '../../src/core/log.ts'
import { sendMessage } from '../../src/messages/service.ts'
import { addChannel, addUser } from '../../src/people/service.ts'
import { subscribe } from '../../src/push/service.ts'
import { DEFAULTS } from '../../src/server/config.ts'
import { closeContext } from '../../src/server/context.ts'
import { createPgContext } from '../../src/server/db/pg/context.ts'
import { tempDir, until } from '../harness.ts'
import { makeSubscription } from '../push/receiver.ts'
import { type PgCluster, skipWithoutPostgres, startCluster } from './cluster.ts'

/**
 * A graceful stop on Postgres hands its sends in flight back to the queue. Leases are not
 * released at start there (another instance's would be taken for a crash's), so without the
 * hand-back a restart would leave them leased until their lease (2 minutes) runs out.
 */
const skip = skipWithoutPostgres()

let cluster: PgCluster
const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} }

describe.skipIf(skip)('stopping an instance on Postgres with a push in flight', () => {
  beforeAll(async () => {
    cluster = await startCluster()
  }, 60_000)
  afterAll(async () => {
    await cluster?.close()
  })

  test('hands the push back to the queue, due now, not leased', async () => {
    // A push service that takes the request and never answers: the send is in flight.
    let arrived = 0
    const hung = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        arrived++
        return new Promise<Response>(() => {})
      },
    })
    const url = await cluster.database('stop')
    const sql = new SQL(url, { max: 1 })
    try {
      const made = await withDatabase(
        tempDir('hark-admin-'),
        async (p) => {
          const user = await addUser(p, { email: 'o@example.com', owner: true })
          const { channel } = await addChannel(p, { email: 'o@example.com' })
          return { user, channel }
        },
        url,
      )
      const ctx = await createPgContext(
        {
          ...DEFAULTS,
          dataDir: tempDir('hark-stop-'),
          databaseUrl: url,
          port: 0,
          baseUrl: 'http://hark.test',
          pushAllowHosts: ['127.0.0.1'],
        },
        { log: quiet },
      )
      const sub = makeSubscription(`http://127.0.0.1:${hung.port}`, 'phone')
      await subscribe(ctx, made.user.id, { endpoint: sub.endpoint, keys: sub.keys }, null)
      await sendMessage(ctx, made.channel, 'agent', { body: { text: 'in flight' } })
      await until(() => arrived === 1, 10_000)
      const [leased] = await sql`SELECT leased FROM push_queue`
      expect(Number(leased.leased)).toBe(1)
      const stopped = Date.now()
      await closeContext(ctx)
      const [row] = await sql`SELECT leased, due_at, attempts FROM push_queue`
      expect(Number(row.leased)).toBe(0)
      expect(Number(row.due_at)).toBeLessThanOrEqual(Date.now())
      expect(Number(row.due_at)).toBeGreaterThanOrEqual(stopped - 1_000)
      // Not counted as a failed attempt: the stop cut it short, not the push service.
      expect(Number(row.attempts)).toBe(0)
    } finally {
      await sql.close()
      hung.stop(true)
    }
  })
})
