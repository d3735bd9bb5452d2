import type { SQL } from 'bun'
import type { ChannelRow } from '../../channels/store.ts'
import { changed, every, first, inserted, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import type { TokenRow, TokenStore } from './store.ts'

const row = rowOf<TokenRow>({ ints: ['created_at', 'last_used_at', 'revoked_at'], bytes: ['hash'] })
const channelRow = rowOf<ChannelRow>({ ints: ['created_at', 'updated_at', 'read_rid'] })

/** access/tokens/store.ts on Postgres (see db/pg/twin.ts); writes in a transaction. */
export function pgTokenStore(sql: SQL): PgTwin<TokenStore> {
  return {
    insert: (t) => inserted(sql, 'tokens', t, row),
    byHash: (hash) => first(sql`SELECT * FROM tokens WHERE hash = ${hash}`, row),
    // One statement, not two: an agent's every request checks its token (issue 32 item 6: a
    // round trip and a transaction fewer per send). The channel's row as JSON: its columns
    // would otherwise collide with the token's (id, user_id, label, created_at).
    async withChannel(hash) {
      const [found] = await sql`
        SELECT t.*, to_json(c) AS hark_channel
        FROM tokens t LEFT JOIN channels c ON c.id = t.channel_id
        WHERE t.hash = ${hash}`
      if (!found) return undefined
      const { hark_channel: channel, ...token } = found as { hark_channel: unknown }
      const parsed = typeof channel === 'string' ? JSON.parse(channel) : channel
      return { token: row(token), channel: parsed ? channelRow(parsed) : undefined }
    },
    async touch(id, now) {
      await sql`UPDATE tokens SET last_used_at = ${now} WHERE id = ${id}`
    },
    byId: (id) => first(sql`SELECT * FROM tokens WHERE id = ${id}`, row),
    liveByUser: (userId) =>
      every(
        sql`
        SELECT * FROM tokens WHERE user_id = ${userId} AND revoked_at IS NULL
        ORDER BY created_at, id`,
        row,
      ),
    async revoke(id, now) {
      await sql`UPDATE tokens SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL`
    },
    async revokeChannel(channelId, now) {
      await sql`UPDATE tokens SET revoked_at = ${now}
                WHERE channel_id = ${channelId} AND revoked_at IS NULL`
    },
    revokePersonTokens: (userId, now) =>
      changed(sql`
        UPDATE tokens SET revoked_at = ${now}
        WHERE user_id = ${userId} AND kind = 'person' AND revoked_at IS NULL`),
  }
}
