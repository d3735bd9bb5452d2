import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { sendMessage } from '../../src/messages/service.ts'
import { subscribe } from '../../src/push/service.ts'
import { closeContext } from '../../src/server/context.ts'
import { until } from '../harness.ts'
import { makeSubscription } from '../push/receiver.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * A graceful stop on Postgres hands its sends in flight back to the queue. Leases are not
 * released at start there (another instance's would be taken for a crash's), so without the
 * hand-back a restart would leave them leased until their lease (2 minutes) runs out.
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('stopping an instance on Postgres with a push in flight', () => {
  const cluster = useCluster()

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
      const made = await provisionOwner(url)
      const ctx = await pgInstance(url, { pushAllowHosts: ['127.0.0.1'] })
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
