import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { personBatch } from '../../src/access/idempotency/service.ts'
import { cancelAsk } from '../../src/messages/asks/service.ts'
import type { Block } from '../../src/messages/schema.ts'
import { sendMessage } from '../../src/messages/service.ts'
import { closeContext } from '../../src/server/context.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * The events a unit emits on Postgres (core/events.ts): their reactions (a push queued, an
 * audit line) are written in the unit's transaction, and in one person's batch (several units
 * in one transaction, each in a savepoint: pg/write-path.ts) a unit rolled back to its
 * savepoint takes its reactions' rows with it while its neighbours' stay. SQLite's twin:
 * test/push/events.test.ts.
 */
const skip = skipWithoutPostgres()

describe.skipIf(skip)('events on Postgres', () => {
  const cluster = useCluster()

  test("a unit rolled back to its savepoint in a person's batch leaves no push row and no audit row", async () => {
    const url = await cluster.database('events_savepoint')
    const sql = new SQL(url, { max: 1 })
    const made = await provisionOwner(url)
    const ctx = await pgInstance(url)
    // The queue is counted, not emptied by the worker's sends.
    ctx.push.stop()
    try {
      await sql`
        INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, created_at)
        VALUES ('sub_1', ${made.user.id}, 'https://push.example/1', 'k', 'a', 0)`
      const channel = made.channel
      const fails = new Error('the unit fails after its send')
      const send = (text: string) =>
        sendMessage(ctx, channel, 'agent', { body: { text } }).then(() => 'kept')
      // A unit holds the person's transaction open until the three others are queued behind
      // it: they share the next one, each in a savepoint (none of them does I/O before it
      // queues, so one turn of the event loop queues them all).
      let open = () => {}
      const held = new Promise<void>((resolve) => {
        open = resolve
      })
      const holding = ctx.writes.run(async () => await held, personBatch(channel))
      const outcomes = Promise.all([
        send('second'),
        ctx.writes
          .run(async () => {
            await sendMessage(ctx, channel, 'agent', { body: { text: 'taken back' } })
            throw fails
          }, personBatch(channel))
          .catch((error: unknown) => (error === fails ? 'rolled back' : String(error))),
        send('fourth'),
      ])
      await new Promise((resolve) => setImmediate(resolve))
      open()
      await holding
      expect(await outcomes).toEqual(['kept', 'rolled back', 'kept'])
      const pushed = await sql`
        SELECT m.body FROM push_queue q JOIN messages m ON m.id = q.message_id ORDER BY q.id`
      expect(pushed.map((r: { body: string }) => JSON.parse(r.body).text)).toEqual([
        'second',
        'fourth',
      ])
      expect(
        (await sql`SELECT count(*)::int AS n FROM messages WHERE body LIKE '%taken back%'`)[0].n,
      ).toBe(0)

      // An approval cancelled by a unit that then fails: no audit line; cancelled by one that
      // stands: one.
      const approval: Block = { type: 'approval', id: 'a', tool: 'Bash', input: { command: 'ls' } }
      const asked = await sendMessage(ctx, channel, 'agent', { body: { blocks: [approval] } })
      const cancelled = ctx.writes.run(async () => {
        await cancelAsk(ctx, channel, asked.id)
        throw fails
      })
      await expect(cancelled).rejects.toBe(fails)
      expect((await sql`SELECT count(*)::int AS n FROM audit_log`)[0].n).toBe(0)
      await cancelAsk(ctx, channel, asked.id)
      expect((await sql`SELECT count(*)::int AS n FROM audit_log`)[0].n).toBe(1)
    } finally {
      await closeContext(ctx)
      await sql.close()
    }
  }, 60_000)
})
