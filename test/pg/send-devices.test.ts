// test-needs: postgres
import { describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { sendMessage } from '../../src/messages/service.ts'
import { pgPushStore } from '../../src/push/pg-store.ts'
import { subscribe } from '../../src/push/service.ts'
import { closeContext } from '../../src/server/context.ts'
import { startReceiver } from '../push/receiver.ts'
import { skipWithoutPostgres } from './cluster.ts'
import { pgInstance, provisionOwner } from './instance.ts'
import { useCluster } from './use-cluster.ts'

/**
 * A send asks whether its person has a device without the lock a subscribe counts their
 * devices under (issue 32 item 6: one statement a send fewer on Postgres, and a person's sends
 * and subscribes no longer queue on each other): a send goes through while a subscribe of the
 * same person holds that lock, and its push still goes to the device the person has. In one
 * transaction (a batch of the person's sends) the answer is asked once.
 */
const skip = skipWithoutPostgres()

/** push/pg-store.ts's first key of the devices' advisory lock ("push" in ASCII). */
const DEVICES_LOCK = 0x70757368

describe.skipIf(skip)('a send on Postgres and the devices lock', () => {
  const cluster = useCluster()

  test("sendMessage: answered while a subscribe holds the person's devices lock; the push goes out", async () => {
    const url = await cluster.database('send_devices')
    const made = await provisionOwner(url)
    const admin = new SQL(url, { max: 1 })
    // A statement waiting on a lock fails after this long instead of waiting for ever.
    await admin.unsafe(`ALTER DATABASE send_devices SET lock_timeout = '3s'`)
    const receiver = startReceiver()
    const ctx = await pgInstance(url, { pushAllowHosts: ['127.0.0.1'] })
    const holder = await admin.reserve()
    try {
      const sub = receiver.subscription('phone')
      await subscribe(ctx, made.user.id, { endpoint: sub.endpoint, keys: sub.keys }, null)
      // What a subscribe holds from its count to its commit.
      await holder`BEGIN`
      await holder`SELECT pg_advisory_xact_lock(${DEVICES_LOCK}::int, hashtext(${made.user.id}))`
      const row = await sendMessage(ctx, made.channel, 'agent', { body: { text: 'while held' } })
      expect(row.body).toContain('while held')
      await holder`ROLLBACK`
      const [pushed] = await receiver.waitFor(1, 10_000)
      expect(pushed?.payload.text).toBe('while held')
    } finally {
      holder.release()
      await admin.close()
      await closeContext(ctx)
      receiver.close()
    }
  }, 60_000)

  test("anyByUser in a transaction: asked once, until the transaction's store changes devices", async () => {
    const url = await cluster.database('send_devices_memo')
    const made = await provisionOwner(url)
    const sql = new SQL(url, { max: 2 })
    const device = (id: string) => ({
      id,
      user_id: made.user.id,
      endpoint: `https://push.example.com/${id}`,
      p256dh: 'k',
      auth: 'a',
      name: null,
      user_agent: null,
      created_at: 1,
    })
    try {
      await sql.begin(async (tx) => {
        const store = pgPushStore(tx, { transaction: true })
        expect(await store.anyByUser(made.user.id)).toBe(false)
        // A device another connection commits meanwhile: this transaction's sends keep the
        // first answer (they commit together, as if all had asked then).
        await sql`INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, created_at)
                  VALUES ('elsewhere', ${made.user.id}, 'https://push.example.com/e', 'k', 'a', 1)`
        expect(await store.anyByUser(made.user.id)).toBe(false)
        // The pool's store (no transaction) asks every time.
        expect(await pgPushStore(sql).anyByUser(made.user.id)).toBe(true)
        // A device this store adds is seen at once.
        await store.insert(device('here'))
        expect(await store.anyByUser(made.user.id)).toBe(true)
      })
    } finally {
      await sql.close()
    }
  }, 60_000)
})
