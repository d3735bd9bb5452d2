import type { Database } from 'bun:sqlite'

/** A device that receives notifications, as stored. */
export interface SubscriptionRow {
  id: string
  user_id: string
  endpoint: string
  p256dh: string
  auth: string
  name: string | null
  user_agent: string | null
  created_at: number
  last_success_at: number | null
}

/** A push waiting to go out, with the device it goes to. */
export interface QueuedPush {
  id: number
  subscription_id: string
  message_id: string | null
  payload: string
  attempts: number
  due_at: number
  endpoint: string
  p256dh: string
  auth: string
}

/** An open question whose person wants an email when it waits too long. */
export interface DueReminder {
  message_id: string
  channel_id: string
  channel_label: string
  body: string
  email: string
}

/** Every SQL statement of web push, prepared once per database. */
export function pushStore(db: Database) {
  const q = {
    insert: db.query<
      SubscriptionRow,
      [string, string, string, string, string, string | null, string | null, number]
    >(
      // The same endpoint again from the same person (the browser re-subscribing) is the same
      // device: keep one row, with fresh keys. Another person's endpoint is never taken over:
      // the WHERE leaves that row alone and nothing is returned (the caller answers 409).
      `INSERT INTO push_subscriptions (id, user_id, endpoint, p256dh, auth, name, user_agent, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
       ON CONFLICT (endpoint) DO UPDATE SET p256dh = ?4, auth = ?5,
         name = coalesce(?6, name), user_agent = ?7
         WHERE push_subscriptions.user_id = ?2
       RETURNING *`,
    ),
    byId: db.query<SubscriptionRow, [string]>('SELECT * FROM push_subscriptions WHERE id = ?1'),
    byEndpoint: db.query<SubscriptionRow, [string]>(
      'SELECT * FROM push_subscriptions WHERE endpoint = ?1',
    ),
    byUser: db.query<SubscriptionRow, [string]>(
      'SELECT * FROM push_subscriptions WHERE user_id = +?1 ORDER BY created_at, id',
    ),
    countByUser: db.query<{ n: number }, [string]>(
      'SELECT count(*) AS n FROM push_subscriptions WHERE user_id = ?1',
    ),
    anyByUser: db.query<{ any: number }, [string]>(
      'SELECT EXISTS (SELECT 1 FROM push_subscriptions WHERE user_id = ?1) AS "any"',
    ),
    remove: db.query<null, [string]>('DELETE FROM push_subscriptions WHERE id = ?1'),
    removeAll: db.query<null, []>('DELETE FROM push_subscriptions'),
    removeByUser: db.query<null, [string]>('DELETE FROM push_subscriptions WHERE user_id = ?1'),
    succeeded: db.query<null, [string, number]>(
      'UPDATE push_subscriptions SET last_success_at = ?2 WHERE id = ?1',
    ),
    // One push per device of the person, written with the message in its transaction.
    enqueueForUser: db.query<null, [string, string | null, string, number]>(
      `INSERT INTO push_queue (subscription_id, message_id, payload, due_at, created_at)
       SELECT id, ?2, ?3, ?4, ?4 FROM push_subscriptions WHERE user_id = ?1`,
    ),
    enqueueOne: db.query<null, [string, string | null, string, number]>(
      `INSERT INTO push_queue (subscription_id, message_id, payload, due_at, created_at)
       VALUES (?1, ?2, ?3, ?4, ?4)`,
    ),
    due: db.query<QueuedPush, [number, number]>(
      `SELECT q.id, q.subscription_id, q.message_id, q.payload, q.attempts, q.due_at,
              s.endpoint, s.p256dh, s.auth
       FROM push_queue q JOIN push_subscriptions s ON s.id = q.subscription_id
       WHERE q.due_at <= +?1 ORDER BY q.due_at, q.id LIMIT +?2`,
    ),
    nextDue: db.query<{ at: number | null }, []>('SELECT min(due_at) AS at FROM push_queue'),
    queued: db.query<{ n: number }, []>('SELECT count(*) AS n FROM push_queue'),
    done: db.query<null, [number]>('DELETE FROM push_queue WHERE id = ?1'),
    retry: db.query<null, [number, number, number]>(
      'UPDATE push_queue SET attempts = ?2, due_at = ?3, leased = 0 WHERE id = ?1',
    ),
    lease: db.query<null, [number, number]>(
      'UPDATE push_queue SET leased = 1, due_at = ?2 WHERE id = ?1',
    ),
    // After a restart no send is in flight: what was leased is due again at once.
    releaseLeases: db.query<null, [number]>(
      'UPDATE push_queue SET leased = 0, due_at = ?1 WHERE leased = 1',
    ),
    addCapability: db.query<null, [Uint8Array, string, number]>(
      'INSERT INTO push_capabilities (hash, message_id, expires_at) VALUES (?1, ?2, ?3)',
    ),
    capability: db.query<{ message_id: string; expires_at: number }, [Uint8Array]>(
      'SELECT message_id, expires_at FROM push_capabilities WHERE hash = ?1',
    ),
    dropCapabilities: db.query<null, [string]>(
      'DELETE FROM push_capabilities WHERE message_id = ?1',
    ),
    dropExpiredCapabilities: db.query<null, [number]>(
      'DELETE FROM push_capabilities WHERE expires_at <= ?1',
    ),
    reminderMinutes: db.query<{ minutes: number }, [string]>(
      'SELECT minutes FROM push_email_reminders WHERE user_id = ?1',
    ),
    setReminder: db.query<null, [string, number, number]>(
      `INSERT INTO push_email_reminders (user_id, minutes, since) VALUES (?1, ?2, ?3)
       ON CONFLICT (user_id) DO UPDATE SET minutes = ?2`,
    ),
    clearReminder: db.query<null, [string]>('DELETE FROM push_email_reminders WHERE user_id = ?1'),
    dueReminders: db.query<DueReminder, [number]>(
      `SELECT m.id AS message_id, m.channel_id, c.label AS channel_label, m.body, u.email
       FROM push_email_reminders r
       JOIN users u ON u.id = r.user_id
       JOIN channels c ON c.user_id = r.user_id
       JOIN messages m INDEXED BY messages_open_asks ON m.channel_id = c.id
       WHERE u.email_verified = 1 AND m.ask_status = 'open' AND m.deleted_at IS NULL
         AND m.created_at >= r.since AND m.created_at + r.minutes * 60000 <= +?1
         AND NOT EXISTS (SELECT 1 FROM push_reminded d WHERE d.message_id = m.id)
       LIMIT 100`,
    ),
    reminded: db.query<null, [string, number]>(
      'INSERT OR IGNORE INTO push_reminded (message_id, sent_at) VALUES (?1, ?2)',
    ),
  }
  return {
    /** The stored row, or undefined when the endpoint belongs to another person. */
    insert: (s: Omit<SubscriptionRow, 'last_success_at'>): SubscriptionRow | undefined =>
      q.insert.get(
        s.id,
        s.user_id,
        s.endpoint,
        s.p256dh,
        s.auth,
        s.name,
        s.user_agent,
        s.created_at,
      ) ?? undefined,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    byEndpoint: (endpoint: string) => q.byEndpoint.get(endpoint) ?? undefined,
    byUser: (userId: string) => q.byUser.all(userId),
    countByUser: (userId: string) => q.countByUser.get(userId)?.n ?? 0,
    /** Whether the person has a device: a send's question, which takes no lock (pg-store.ts). */
    anyByUser: (userId: string) => q.anyByUser.get(userId)?.any === 1,
    remove: (id: string): void => {
      q.remove.run(id)
    },
    removeAll: () => q.removeAll.run().changes,
    /** Removes every device of the person (their queued pushes go with them); returns how many. */
    removeByUser: (userId: string) => q.removeByUser.run(userId).changes,
    succeeded: (id: string, now: number): void => {
      q.succeeded.run(id, now)
    },
    enqueueForUser: (userId: string, messageId: string | null, payload: string, now: number) =>
      q.enqueueForUser.run(userId, messageId, payload, now).changes,
    enqueueOne: (
      subscriptionId: string,
      messageId: string | null,
      payload: string,
      now: number,
    ): void => {
      q.enqueueOne.run(subscriptionId, messageId, payload, now)
    },
    /**
     * Takes up to `limit` pushes due at `now` for sending, oldest first, as they were queued:
     * each is leased until `leaseUntil` (due again then, should its send never end). Call in a
     * write unit: SQLite's one writer makes the read and the leases one step.
     */
    claim: (now: number, limit: number, leaseUntil: number): QueuedPush[] => {
      const rows = q.due.all(now, limit)
      for (const row of rows) q.lease.run(row.id, leaseUntil)
      return rows
    },
    nextDue: () => q.nextDue.get()?.at ?? null,
    queued: () => q.queued.get()?.n ?? 0,
    done: (id: number): void => {
      q.done.run(id)
    },
    retry: (id: number, attempts: number, dueAt: number): void => {
      q.retry.run(id, attempts, dueAt)
    },
    releaseLeases: (now: number): void => {
      q.releaseLeases.run(now)
    },
    addCapability: (hash: Uint8Array, messageId: string, expiresAt: number): void => {
      q.addCapability.run(hash, messageId, expiresAt)
    },
    capability: (hash: Uint8Array) => q.capability.get(hash) ?? undefined,
    dropCapabilities: (messageId: string): void => {
      q.dropCapabilities.run(messageId)
    },
    dropExpiredCapabilities: (now: number): void => {
      q.dropExpiredCapabilities.run(now)
    },
    reminderMinutes: (userId: string) => q.reminderMinutes.get(userId)?.minutes ?? null,
    setReminder: (userId: string, minutes: number | null, now: number): void => {
      if (minutes === null) q.clearReminder.run(userId)
      else q.setReminder.run(userId, minutes, now)
    },
    dueReminders: (now: number) => q.dueReminders.all(now),
    reminded: (messageId: string, now: number) => q.reminded.run(messageId, now).changes,
  }
}

export type PushStore = ReturnType<typeof pushStore>
