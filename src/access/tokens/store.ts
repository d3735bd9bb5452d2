import type { Database } from 'bun:sqlite'
import type { TokenKind } from '../../core/ids.ts'
import { CHANNEL_COLUMNS, channelIn, type Prefixed, USER_COLUMNS, userIn } from '../joined-store.ts'
import type { ChannelRow, UserRow } from '../rows.ts'

export interface TokenRow {
  id: string
  kind: TokenKind
  hash: Uint8Array
  user_id: string
  channel_id: string | null
  label: string | null
  created_at: number
  last_used_at: number | null
  revoked_at: number | null
}

/** A token with its person and, for an agent token, its channel: who a bearer is. */
export interface TokenOwner {
  token: TokenRow
  /** Undefined only if the person's row is gone (their tokens go with it: a cascade). */
  user: UserRow | undefined
  /** Undefined for a person token (or a channel gone: its tokens go with it). */
  channel: ChannelRow | undefined
}

/** A row of `withOwner`: the token's columns, its person's (`user.*`) and its channel's. */
export type OwnerColumns = TokenRow & Prefixed<UserRow, 'user'> & Prefixed<ChannelRow, 'channel'>

/** A row of `withOwner` (both engines) as its three rows. */
export const ownerOf = (r: OwnerColumns): TokenOwner => ({
  token: {
    id: r.id,
    kind: r.kind,
    hash: r.hash,
    user_id: r.user_id,
    channel_id: r.channel_id,
    label: r.label,
    created_at: r.created_at,
    last_used_at: r.last_used_at,
    revoked_at: r.revoked_at,
  },
  user: userIn(r),
  channel: channelIn(r),
})

export function tokenStore(db: Database) {
  const q = {
    insert: db.query<
      TokenRow,
      [string, string, Uint8Array, string, string | null, string | null, number]
    >(
      `INSERT INTO tokens (id, kind, hash, user_id, channel_id, label, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING *`,
    ),
    // Left joins: a person token has no channel, and the guard tells a token of the wrong kind
    // apart from an unknown one. `+?1`, not `?1`: compared with a bare parameter, SQLite (3.54)
    // prepares a join again at every run (measured: 40-90 µs a lookup against 3-7 µs; the
    // unique index on hash is used either way, EXPLAIN QUERY PLAN).
    withOwner: db.query<OwnerColumns, [Uint8Array]>(
      `SELECT t.*, ${USER_COLUMNS}, ${CHANNEL_COLUMNS}
       FROM tokens t
       LEFT JOIN users u ON u.id = t.user_id
       LEFT JOIN channels c ON c.id = t.channel_id
       WHERE t.hash = +?1`,
    ),
    touch: db.query<null, [string, number]>('UPDATE tokens SET last_used_at = ?2 WHERE id = ?1'),
    byId: db.query<TokenRow, [string]>('SELECT * FROM tokens WHERE id = ?1'),
    liveByUser: db.query<TokenRow, [string]>(
      'SELECT * FROM tokens WHERE user_id = +?1 AND revoked_at IS NULL ORDER BY created_at, id',
    ),
    revoke: db.query<null, [string, number]>(
      'UPDATE tokens SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL',
    ),
    revokeChannel: db.query<null, [string, number]>(
      'UPDATE tokens SET revoked_at = ?2 WHERE channel_id = ?1 AND revoked_at IS NULL',
    ),
    revokePersonTokens: db.query<null, [string, number]>(
      `UPDATE tokens SET revoked_at = ?2
       WHERE user_id = ?1 AND kind = 'person' AND revoked_at IS NULL`,
    ),
  }
  return {
    insert: (t: Omit<TokenRow, 'last_used_at' | 'revoked_at'>) =>
      q.insert.get(
        t.id,
        t.kind,
        t.hash,
        t.user_id,
        t.channel_id,
        t.label,
        t.created_at,
      ) as TokenRow,
    /** The token of this hash with its owner (one read: the guards run it on every request). */
    withOwner: (hash: Uint8Array): TokenOwner | undefined => {
      const found = q.withOwner.get(hash)
      return found ? ownerOf(found) : undefined
    },
    touch: (id: string, now: number): void => {
      q.touch.run(id, now)
    },
    byId: (id: string) => q.byId.get(id) ?? undefined,
    liveByUser: (userId: string) => q.liveByUser.all(userId),
    revoke: (id: string, now: number): void => {
      q.revoke.run(id, now)
    },
    revokeChannel: (channelId: string, now: number): void => {
      q.revokeChannel.run(channelId, now)
    },
    /** Revokes every live person token of the person; returns how many. */
    revokePersonTokens: (userId: string, now: number) =>
      q.revokePersonTokens.run(userId, now).changes,
  }
}

export type TokenStore = ReturnType<typeof tokenStore>
