import type { SQL } from 'bun'
import { first, inserted, type PgTwin, rowOf } from '../../../db/pg/twin.ts'
import type { PolicyRow, PolicyStore } from './store.ts'

const row = rowOf<PolicyRow>({
  ints: ['created_at', 'expires_at', 'revoked_at', 'uses', 'last_used_at'],
})

/** policies/store.ts on Postgres (see db/pg/twin.ts); `sql` is a transaction. */
export function pgPolicyStore(sql: SQL): PgTwin<PolicyStore> {
  return {
    insert: (p) => inserted(sql, 'policies', { ...p, uses: 0 }, row),
    byId: (id) => first(sql`SELECT * FROM policies WHERE id = ${id}`, row),
    ofUser: async (userId, now) =>
      (
        await sql`SELECT * FROM policies WHERE user_id = ${userId} AND expires_at > ${now}
                  ORDER BY created_at DESC, id`
      ).map(row),
    forChannel: async (userId, channelId, now) =>
      (
        await sql`SELECT * FROM policies WHERE user_id = ${userId}
                    AND (channel_id = ${channelId} OR channel_id IS NULL) AND expires_at > ${now}
                  ORDER BY created_at, id`
      ).map(row),
    // Two revocations at once: the second waits for the first's row lock, then matches
    // nothing (`revoked_at IS NULL` re-checked on the committed row).
    revoke: (id, revocation, at) =>
      first(
        sql`UPDATE policies SET revocation = ${revocation}, revoked_at = ${at}
            WHERE id = ${id} AND revoked_at IS NULL RETURNING *`,
        row,
      ),
    recordUse: (id, at) =>
      first(
        sql`UPDATE policies SET uses = uses + 1, last_used_at = ${at} WHERE id = ${id} RETURNING *`,
        row,
      ),
    eraseExpired: async (now) => (await sql`DELETE FROM policies WHERE expires_at <= ${now}`).count,
  }
}
