import { expect, test } from 'bun:test'
import { pgPushStore } from '../../src/push/pg-store.ts'
import { pushStore } from '../../src/push/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

/** The push store's capabilities and email reminders (push.test.ts has devices and the queue). */
type E = StoreEngine<ReturnType<typeof pushStore>>

const MINUTE = 60_000
/** A realistic ms timestamp (2025), far past 2^31. */
const T = 1_764_000_000_000

async function people(e: E) {
  await e.insert('users', [
    { id: 'u1', email: 'Ann@Example.com', is_owner: 1, created_at: 1, email_verified: 1 },
    { id: 'u2', email: 'bob@example.com', is_owner: 0, created_at: 1, email_verified: 0 },
    { id: 'u3', email: 'cy@example.com', is_owner: 0, created_at: 1, email_verified: 1 },
  ])
  await e.insert('channels', [
    { id: 'c1', user_id: 'u1', label: 'Build bot', created_at: 1, updated_at: 1 },
    { id: 'c2', user_id: 'u2', label: 'Other', created_at: 1, updated_at: 1 },
    { id: 'c3', user_id: 'u3', label: 'Third', created_at: 1, updated_at: 1 },
  ])
}

let rid = 0
const ask = (e: E, id: string, channel: string, at: number, more: Record<string, unknown> = {}) =>
  e.insert('messages', {
    rid: ++rid,
    id,
    channel_id: channel,
    seq: rid,
    sender: 'agent',
    body: `{"title":"${id}"}`,
    silent: 0,
    ask_status: 'open',
    created_at: at,
    updated_at: at,
    ...more,
  })

const hash = (n: number) => new Uint8Array(32).fill(n)

describeStore(
  'push store: capabilities and reminders',
  { sqlite: pushStore, postgres: pgPushStore },
  (engine) => {
    test('capabilities: found by their hash bytes, dropped by message or once expired', async () => {
      const e = engine()
      await people(e)
      await ask(e, 'm1', 'c1', T)
      await ask(e, 'm2', 'c1', T)
      await e.write(async (s) => {
        await s.addCapability(hash(1), 'm1', T + 10)
        await s.addCapability(hash(2), 'm1', Number.MAX_SAFE_INTEGER)
        await s.addCapability(hash(3), 'm2', T + 20)
      })
      expect(await e.read((s) => s.capability(hash(1)))).toEqual({
        message_id: 'm1',
        expires_at: T + 10,
      })
      expect(await e.read((s) => s.capability(hash(2)))).toEqual({
        message_id: 'm1',
        expires_at: Number.MAX_SAFE_INTEGER,
      })
      expect(await e.read((s) => s.capability(hash(9)))).toBeUndefined()
      expect(await e.read((s) => s.capability(hash(1).subarray(0, 31)))).toBeUndefined()
      await expect(e.write((s) => s.addCapability(hash(1), 'm2', 5))).rejects.toThrow()
      // Expired means expires_at <= now: the one expiring at this very ms goes.
      await e.write((s) => s.dropExpiredCapabilities(T + 10))
      expect(await e.read((s) => s.capability(hash(1)))).toBeUndefined()
      expect(await e.read((s) => s.capability(hash(3)))).toBeDefined()
      await e.write((s) => s.dropCapabilities('m1'))
      expect(await e.read((s) => s.capability(hash(2)))).toBeUndefined()
      expect(await e.read((s) => s.capability(hash(3)))).toBeDefined()
      await e.rows('DELETE FROM messages WHERE id = ?', 'm2') // a capability dies with its message
      expect(await e.read((s) => s.capability(hash(3)))).toBeUndefined()
    })

    test('reminder minutes: null until set; set again keeps its start; null clears', async () => {
      const e = engine()
      await people(e)
      expect(await e.read((s) => s.reminderMinutes('u1'))).toBeNull()
      await e.write((s) => s.setReminder('u1', 30, T))
      expect(await e.read((s) => s.reminderMinutes('u1'))).toBe(30)
      await e.write((s) => s.setReminder('u1', 7 * 24 * 60, T + 5))
      expect(await e.read((s) => s.reminderMinutes('u1'))).toBe(7 * 24 * 60)
      const [row] = await e.rows('SELECT since FROM push_email_reminders WHERE user_id = ?', 'u1')
      expect(Number(row?.since)).toBe(T)
      await e.write((s) => s.setReminder('u1', null, T + 9))
      await e.write((s) => s.setReminder('u1', null, T + 9)) // nothing to clear: no error
      expect(await e.read((s) => s.reminderMinutes('u1'))).toBeNull()
    })

    test('dueReminders: open questions of proven addresses, asked since, waiting N minutes, not yet mailed', async () => {
      const e = engine()
      await people(e)
      await e.write(async (s) => {
        await s.setReminder('u1', 10, T)
        await s.setReminder('u2', 10, T) // address not proven: never mailed
        await s.setReminder('u3', 100_000, T) // minutes * 60000 is past int4: must not overflow
      })
      await ask(e, 'before', 'c1', T - 1) // asked before the reminder was turned on
      await ask(e, 'due', 'c1', T)
      await ask(e, 'boundary', 'c1', T + 5 * MINUTE) // due at exactly now
      await ask(e, 'young', 'c1', T + 5 * MINUTE + 1)
      await ask(e, 'answered', 'c1', T, { ask_status: 'answered' })
      await ask(e, 'deleted', 'c1', T, { deleted_at: T + 1 })
      await ask(e, 'unproven', 'c2', T)
      await ask(e, 'later', 'c3', T)
      const now = T + 15 * MINUTE
      const due = await e.read((s) => s.dueReminders(now))
      expect(due.toSorted((a, b) => a.message_id.localeCompare(b.message_id))).toEqual([
        {
          message_id: 'boundary',
          channel_id: 'c1',
          channel_label: 'Build bot',
          body: '{"title":"boundary"}',
          email: 'Ann@Example.com',
        },
        {
          message_id: 'due',
          channel_id: 'c1',
          channel_label: 'Build bot',
          body: '{"title":"due"}',
          email: 'Ann@Example.com',
        },
      ])
      expect(await e.write((s) => s.reminded('due', now))).toBe(1)
      expect(await e.write((s) => s.reminded('due', now + 1))).toBe(0)
      expect((await e.read((s) => s.dueReminders(now))).map((r) => r.message_id)).toEqual([
        'boundary',
      ])
      const far = T + 100_000 * MINUTE
      expect(
        (await e.read((s) => s.dueReminders(far))).map((r) => r.message_id).toSorted(),
      ).toEqual(['boundary', 'later', 'young'])
    })

    test('dueReminders answers at most 100', async () => {
      const e = engine()
      await people(e)
      await e.write((s) => s.setReminder('u1', 1, T))
      for (let i = 0; i < 105; i++) await ask(e, `q${i}`, 'c1', T)
      expect(await e.read((s) => s.dueReminders(T + MINUTE))).toHaveLength(100)
    }, 60_000)

    test('reminded racing: exactly one marks the question', async () => {
      const e = engine()
      await people(e)
      await ask(e, 'q', 'c1', T)
      const marked = await Promise.all(
        [1, 2, 3, 4].map((n) =>
          e.write(async (s) => {
            const made = await s.reminded('q', T + n)
            await Bun.sleep(20) // the first holds its row while the others insert
            return made
          }),
        ),
      )
      expect(marked.toSorted()).toEqual([0, 0, 0, 1])
    })
  },
)
