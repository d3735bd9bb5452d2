import type { SQL } from 'bun'
import { bytes, ints, type PgTwin } from '../../server/db/pg/twin.ts'
import type { TokenRow, TokenStore } from './store.ts'

const row = (r: unknown) =>
  bytes<TokenRow>(ints<TokenRow>(r, ['created_at', 'last_used_at', 'revoked_at']), ['hash'])

/** access/tokens/store.ts on Postgres (see server/db/pg/twin.ts); writes in a transaction. */
export function pgTokenStore(sql: SQL): PgTwin<TokenStore> {
  return {
    async insert(t) {
      const [made] = await sql`
        INSERT INTO tokens (id, kind, hash, user_id, channel_id, label, created_at)
        VALUES (${t.id}, ${t.kind}, ${t.hash}, ${t.user_id}, ${t.channel_id}, ${t.label},
                ${t.created_at})
        RETURNING *`
      return row(made)
    },
    async byHash(hash) {
      const [found] = await sql`SELECT * FROM tokens WHERE hash = ${hash}`
      return found ? row(found) : undefined
    },
    async touch(id, now) {
      await sql`UPDATE tokens SET last_used_at = ${now} WHERE id = ${id}`
    },
    async byId(id) {
      const [found] = await sql`SELECT * FROM tokens WHERE id = ${id}`
      return found ? row(found) : undefined
    },
    async liveByUser(userId) {
      const rows = await sql`
        SELECT * FROM tokens WHERE user_id = ${userId} AND revoked_at IS NULL
        ORDER BY created_at, id`
      return rows.map(row)
    },
    async revoke(id, now) {
      await sql`UPDATE tokens SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL`
    },
    async revokeChannel(channelId, now) {
      await sql`UPDATE tokens SET revoked_at = ${now}
                WHERE channel_id = ${channelId} AND revoked_at IS NULL`
    },
    async revokePersonTokens(userId, now) {
      const revoked = await sql`
        UPDATE tokens SET revoked_at = ${now}
        WHERE user_id = ${userId} AND kind = 'person' AND revoked_at IS NULL`
      return revoked.count
    },
  }
}
