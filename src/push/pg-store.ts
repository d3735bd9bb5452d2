import type { SQL } from 'bun'
import { changed, counted, every, first, type PgTwin, rowOf } from '../db/pg/twin.ts'
import type { DueReminder, PushStore, QueuedPush, SubscriptionRow } from './store.ts'

const subscription = rowOf<SubscriptionRow>({ ints: ['created_at', 'last_success_at'] })
const queued = rowOf<QueuedPush>({ ints: ['id', 'due_at'] })
const capability = rowOf<{ message_id: string; expires_at: number }>({ ints: ['expires_at'] })

/**
 * The first key of the advisory locks that queue one person's subscribes ("push" in ASCII);
 * the second is the hash of their id. The two-int form is a key space of its own, apart from
 * the one-bigint keys (migrations, the owner, the audit chain).
 */
const DEVICES_LOCK = 0x70757368

/** How a store is opened: `transaction` when `sql` is one transaction (a unit's, a batch's). */
export interface PgStoreOptions {
  transaction?: boolean
}

/**
 * push/store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction. Ties in
 * creation time are ordered by id `COLLATE "C"`, byte order as SQLite's BINARY.
 */
export function pgPushStore(sql: SQL, options: PgStoreOptions = {}): PgTwin<PushStore> {
  // In one transaction, each person's `anyByUser` answer, asked once (see there); forgotten when
  // this store changes devices.
  const anyMemo = options.transaction ? new Map<string, Promise<boolean>>() : undefined
  const changing = <T>(p: Promise<T>) => {
    anyMemo?.clear()
    return p
  }
  return {
    insert: (s) =>
      changing(
        // As on SQLite: the same endpoint from the same person is the same device (fresh keys);
        // another person's endpoint is left alone and nothing is returned. Two instances storing
        // one endpoint at once: ON CONFLICT makes the second wait for the first's row, then
        // update it (or leave it), never fail on the unique index.
        first(
          sql`
        INSERT INTO push_subscriptions
          (id, user_id, endpoint, p256dh, auth, name, user_agent, created_at)
        VALUES (${s.id}, ${s.user_id}, ${s.endpoint}, ${s.p256dh}, ${s.auth}, ${s.name},
                ${s.user_agent}, ${s.created_at})
        ON CONFLICT (endpoint) DO UPDATE SET p256dh = excluded.p256dh, auth = excluded.auth,
          name = coalesce(excluded.name, push_subscriptions.name),
          user_agent = excluded.user_agent
          WHERE push_subscriptions.user_id = excluded.user_id
        RETURNING *`,
          subscription,
        ),
      ),
    byId: (id) => first(sql`SELECT * FROM push_subscriptions WHERE id = ${id}`, subscription),
    byEndpoint: (endpoint) =>
      first(sql`SELECT * FROM push_subscriptions WHERE endpoint = ${endpoint}`, subscription),
    byUser: (userId) =>
      every(
        sql`
        SELECT * FROM push_subscriptions WHERE user_id = ${userId}
        ORDER BY created_at, id COLLATE "C"`,
        subscription,
      ),
    async countByUser(userId) {
      // Subscribing counts the person's devices, then inserts, in one transaction: under READ
      // COMMITTED two instances' subscribes would both count one place left and both take it
      // (SQLite's one writer queues them). The lock, held to commit, queues one person's
      // subscribes here, and the count after it (its own statement) sees the first's device.
      // An advisory lock rather than the person's row: outside a transaction (a read of the
      // count) it is dropped at once and writes nothing, and it does not wait on the person's
      // message writes, which hold their row for its change counter.
      // Both sent at once (pipelined: one round trip). In a transaction they run in order on
      // its one connection, so the count's snapshot is still taken after the lock is granted.
      // Both are handed to Promise.all unawaited: it starts them in this order, after any
      // statement the caller started before calling. (A send asks `anyByUser` instead.)
      const lock = sql`SELECT pg_advisory_xact_lock(${DEVICES_LOCK}::int, hashtext(${userId}))`
      const count = sql`SELECT count(*) AS n FROM push_subscriptions WHERE user_id = ${userId}`
      const [, rows] = await Promise.all([lock, count])
      return Number((rows[0] as { n?: unknown } | undefined)?.n ?? 0)
    },
    anyByUser(userId) {
      // A send's question (push/service.ts `pushCreated`), without countByUser's lock: the lock
      // queues a person's subscribes, each counting then inserting; a send only asks whether to
      // queue pushes, and reading before or after a subscribe's commit is the same order of
      // events either way (the send before, or after, the new device). One statement a send
      // fewer, and no subscribe waits for a person's sends to commit. In a transaction (a batch
      // of one person's sends, db/pg/batch-tx.ts) the first answer serves the others: they
      // commit together, so all of them asking at the first one's moment is as good an order,
      // and one statement fewer per send but the first.
      const memo = anyMemo?.get(userId)
      if (memo) return memo
      const asked = (async () => {
        const [found] = await sql`SELECT EXISTS (
          SELECT 1 FROM push_subscriptions WHERE user_id = ${userId}) AS "any"`
        return (found as { any?: unknown } | undefined)?.any === true
      })()
      anyMemo?.set(userId, asked)
      // A failed question is asked again, not remembered.
      asked.catch(() => anyMemo?.delete(userId))
      return asked
    },
    async remove(id) {
      await changing(sql`DELETE FROM push_subscriptions WHERE id = ${id}`)
    },
    removeAll: () => changing(changed(sql`DELETE FROM push_subscriptions`)),
    removeByUser: (userId) =>
      changing(changed(sql`DELETE FROM push_subscriptions WHERE user_id = ${userId}`)),
    async succeeded(id, now) {
      await sql`UPDATE push_subscriptions SET last_success_at = ${now} WHERE id = ${id}`
    },
    enqueueForUser: (userId, messageId, payload, now) =>
      // Casts: in a SELECT list a parameter has no column to take its type from.
      changed(sql`
        INSERT INTO push_queue (subscription_id, message_id, payload, due_at, created_at)
        SELECT id, ${messageId}::text, ${payload}::text, ${now}::bigint, ${now}::bigint
        FROM push_subscriptions WHERE user_id = ${userId}`),
    async enqueueOne(subscriptionId, messageId, payload, now) {
      await sql`
        INSERT INTO push_queue (subscription_id, message_id, payload, due_at, created_at)
        VALUES (${subscriptionId}, ${messageId}, ${payload}, ${now}, ${now})`
    },
    claim: (now, limit, leaseUntil) =>
      // Several instances' workers claim from one queue: each due row must go to exactly one.
      // One statement: `picked` locks the due rows it takes and SKIPs those another claim has
      // locked (not yet committed), so a second claimer takes the next rows at once instead of
      // waiting for the first and then, its snapshot older than the lease, leasing the same
      // rows again. A row whose lease committed meanwhile is re-checked under the lock (READ
      // COMMITTED) and dropped: its due_at is the lease's end now. The rows are answered as
      // they were queued (the due_at picked), as SQLite's store does.
      every(
        sql`
        WITH picked AS (
          SELECT id, due_at FROM push_queue WHERE due_at <= ${now}
          ORDER BY due_at, id LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        ), claimed AS (
          UPDATE push_queue q SET leased = 1, due_at = ${leaseUntil}
          FROM picked p WHERE q.id = p.id
          RETURNING q.id, q.subscription_id, q.message_id, q.payload, q.attempts, p.due_at
        )
        SELECT c.*, s.endpoint, s.p256dh, s.auth
        FROM claimed c JOIN push_subscriptions s ON s.id = c.subscription_id
        ORDER BY c.due_at, c.id`,
        queued,
      ),
    async nextDue() {
      const [next] = await sql`SELECT min(due_at) AS at FROM push_queue`
      return next?.at === null || next?.at === undefined ? null : Number(next.at)
    },
    queued: () => counted(sql`SELECT count(*) AS n FROM push_queue`),
    async done(id) {
      await sql`DELETE FROM push_queue WHERE id = ${id}`
    },
    async retry(id, attempts, dueAt) {
      await sql`
        UPDATE push_queue SET attempts = ${attempts}, due_at = ${dueAt}, leased = 0
        WHERE id = ${id}`
    },
    async releaseLeases(now) {
      // Right for one server after a restart. With several instances, one starting would free
      // the sends the others have in flight (sent twice): the worker, once on Postgres, must
      // leave leases to run out instead of calling this at start.
      await sql`UPDATE push_queue SET leased = 0, due_at = ${now} WHERE leased = 1`
    },
    async addCapability(hash, messageId, expiresAt) {
      await sql`
        INSERT INTO push_capabilities (hash, message_id, expires_at)
        VALUES (${hash}, ${messageId}, ${expiresAt})`
    },
    capability: (hash) =>
      first(
        sql`SELECT message_id, expires_at FROM push_capabilities WHERE hash = ${hash}`,
        capability,
      ),
    async dropCapabilities(messageId) {
      await sql`DELETE FROM push_capabilities WHERE message_id = ${messageId}`
    },
    async dropExpiredCapabilities(now) {
      await sql`DELETE FROM push_capabilities WHERE expires_at <= ${now}`
    },
    async reminderMinutes(userId) {
      const [found] = await sql`
        SELECT minutes FROM push_email_reminders WHERE user_id = ${userId}`
      return found ? (found.minutes as number) : null
    },
    async setReminder(userId, minutes, now) {
      if (minutes === null) {
        await sql`DELETE FROM push_email_reminders WHERE user_id = ${userId}`
        return
      }
      await sql`
        INSERT INTO push_email_reminders (user_id, minutes, since)
        VALUES (${userId}, ${minutes}, ${now})
        ON CONFLICT (user_id) DO UPDATE SET minutes = excluded.minutes`
    },
    async dueReminders(now) {
      // `minutes` is an int4 here: times 60000 in int8, so no minutes value can overflow it.
      // (SQLite's INDEXED BY has no Postgres form; the planner picks messages_open_asks.)
      const rows = await sql`
        SELECT m.id AS message_id, m.channel_id, c.label AS channel_label, m.body, u.email
        FROM push_email_reminders r
        JOIN users u ON u.id = r.user_id
        JOIN channels c ON c.user_id = r.user_id
        JOIN messages m ON m.channel_id = c.id
        WHERE u.email_verified = 1 AND m.ask_status = 'open' AND m.deleted_at IS NULL
          AND m.created_at >= r.since AND m.created_at + r.minutes * 60000::bigint <= ${now}
          AND NOT EXISTS (SELECT 1 FROM push_reminded d WHERE d.message_id = m.id)
        ORDER BY m.id
        LIMIT 100`
      return rows as DueReminder[]
    },
    async reminded(messageId, now) {
      // Two instances reminding at once: the second insert waits on the first's key, then does
      // nothing and answers 0, so the mail goes once.
      return changed(sql`
        INSERT INTO push_reminded (message_id, sent_at) VALUES (${messageId}, ${now})
        ON CONFLICT (message_id) DO NOTHING`)
    },
  }
}
