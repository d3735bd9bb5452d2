import type { SQL } from 'bun'
import { changed, every, first, inserted, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import { CHANNEL_COLUMNS, USER_COLUMNS } from '../joined-store.ts'
import { pgChannelRow, pgUserRow } from '../rows.ts'
import { type OwnerColumns, ownerOf, type TokenRow, type TokenStore } from './store.ts'

const row = rowOf<TokenRow>({ ints: ['created_at', 'last_used_at', 'revoked_at'], bytes: ['hash'] })

/** access/tokens/store.ts on Postgres (see db/pg/twin.ts); writes in a transaction. */
export function pgTokenStore(sql: SQL): PgTwin<TokenStore> {
  return {
    insert: (t) => inserted(sql, 'tokens', t, row),
    withOwner: (hash) =>
      first(
        sql.unsafe(
          `SELECT t.*, ${USER_COLUMNS}, ${CHANNEL_COLUMNS}
           FROM tokens t
           LEFT JOIN users u ON u.id = t.user_id
           LEFT JOIN channels c ON c.id = t.channel_id
           WHERE t.hash = $1`,
          [hash],
        ),
        (found) => {
          const { token, user, channel } = ownerOf(found as OwnerColumns)
          return {
            token: row(token),
            user: user && pgUserRow(user),
            channel: channel && pgChannelRow(channel),
          }
        },
      ),
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
