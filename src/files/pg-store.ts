import type { SQL } from 'bun'
import { every, first, inserted, type PgTwin, rowOf } from '../db/pg/twin.ts'
import type { FileRow, FileStore, FileSum } from './store.ts'

const row = rowOf<FileRow>({ ints: ['size', 'created_at'] })
const sum = rowOf<FileSum>({ ints: ['size'] })

/**
 * files/store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction for writes.
 */
export function pgFileStore(sql: SQL): PgTwin<FileStore> {
  return {
    insert: (f) => inserted(sql, 'files', f, row),
    inChannel: (id, channelId) =>
      first(sql`SELECT * FROM files WHERE id = ${id} AND channel_id = ${channelId}`, row),
    async allIds() {
      const found: { id: string; channel_id: string }[] =
        await sql`SELECT id, channel_id FROM files`
      return [...found]
    },
    checksums: () =>
      // COLLATE "C": SQLite orders text by its bytes, and copies are checked in this order.
      every(
        sql`SELECT id, channel_id, size, sha256 FROM files
        ORDER BY channel_id COLLATE "C", id COLLATE "C"`,
        sum,
      ),
    async usage(channelId) {
      // The upload service checks the quotas again in the transaction that records a file
      // (usage, personBytes, then insert) so that concurrent uploads cannot overshoot them
      // together. SQLite has one writer at a time; under Postgres' READ COMMITTED two instances
      // would both count the same rows and both insert. So the channel's person's row is locked
      // first, in its own statement (a count in the same statement would use a snapshot taken
      // before the wait): the person's recordings then take turns, each counting what the one
      // before committed. Both quotas are the person's (a channel has one person). Outside a
      // transaction (the check before the bytes stream) the lock ends with the statement.
      // NO KEY UPDATE: it conflicts with itself and with the change_seq UPDATE, not with the
      // key-share locks of foreign-key checks on the person's other rows.
      await sql`SELECT 1 FROM users
                WHERE id = (SELECT user_id FROM channels WHERE id = ${channelId})
                FOR NO KEY UPDATE`
      // count(*) is int8 and sum(int8) is numeric on Postgres: both arrive as strings.
      const [u] = await sql`SELECT count(*) AS files, coalesce(sum(size), 0) AS bytes
        FROM files WHERE channel_id = ${channelId}`
      return { files: Number(u?.files ?? 0), bytes: Number(u?.bytes ?? 0) }
    },
    async personBytes(userId) {
      const [u] = await sql`SELECT coalesce(sum(size), 0) AS bytes FROM files
        WHERE channel_id IN (SELECT id FROM channels WHERE user_id = ${userId})`
      return Number(u?.bytes ?? 0)
    },
  }
}
