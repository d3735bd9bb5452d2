import type { SQL } from 'bun'
import { pgChannelRow as row } from '../access/rows.ts'
import { counted, every, first, one, type PgTwin } from '../db/pg/twin.ts'
import type { ChannelStore } from './store.ts'

/** channels/store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction. */
export function pgChannelStore(sql: SQL): PgTwin<ChannelStore> {
  return {
    async insert(id, userId, label, now, max) {
      // The person's row is locked first, in its own statement: under READ COMMITTED the count
      // that follows then sees every channel a concurrent insert committed, so two agents
      // connecting at once cannot both take the last place (SQLite has one writer at a time).
      await sql`SELECT 1 FROM users WHERE id = ${userId} FOR UPDATE`
      return first(
        sql`
        INSERT INTO channels (id, user_id, label, created_at, updated_at)
        SELECT ${id}, ${userId}, ${label}, ${now}, ${now}
        WHERE (SELECT count(*) FROM channels WHERE user_id = ${userId}) < ${max}
        RETURNING *`,
        row,
      )
    },
    byId: (id) => first(sql`SELECT * FROM channels WHERE id = ${id}`, row),
    byUser: (userId) =>
      every(sql`SELECT * FROM channels WHERE user_id = ${userId} ORDER BY created_at, id`, row),
    rename: (id, label, now) =>
      one(
        sql`UPDATE channels SET label = ${label}, updated_at = ${now} WHERE id = ${id} RETURNING *`,
        row,
      ),
    async remove(id) {
      await sql`DELETE FROM channels WHERE id = ${id}`
    },
    async lastRid(id) {
      const [last] = await sql`
        SELECT max(rid) AS rid FROM messages
        WHERE channel_id = ${id} AND deleted_at IS NULL AND pin_key IS NULL`
      return Number(last?.rid ?? 0)
    },
    async markRead(id, rid) {
      await sql`UPDATE channels SET read_rid = greatest(read_rid, ${rid}) WHERE id = ${id}`
    },
    unread: (id, afterRid) =>
      counted(sql`
        SELECT count(*) AS n FROM (SELECT 1 FROM messages
          WHERE channel_id = ${id} AND sender = 'agent' AND rid > ${afterRid}
            AND deleted_at IS NULL AND pin_key IS NULL LIMIT 1000) AS unread`),
  }
}
