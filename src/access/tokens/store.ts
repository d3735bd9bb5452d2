import type { Database } from 'bun:sqlite'
import type { ChannelRow } from '../../channels/store.ts'
import type { TokenKind } from '../../core/ids.ts'

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

/** A token as an agent's request finds it: with its channel, if it has one that exists. */
export interface TokenWithChannel {
  token: TokenRow
  channel: ChannelRow | undefined
}

export function tokenStore(db: Database) {
  const q = {
    insert: db.query<
      TokenRow,
      [string, string, Uint8Array, string, string | null, string | null, number]
    >(
      `INSERT INTO tokens (id, kind, hash, user_id, channel_id, label, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING *`,
    ),
    byHash: db.query<TokenRow, [Uint8Array]>('SELECT * FROM tokens WHERE hash = ?1'),
    channel: db.query<ChannelRow, [string]>('SELECT * FROM channels WHERE id = ?1'),
    touch: db.query<null, [string, number]>('UPDATE tokens SET last_used_at = ?2 WHERE id = ?1'),
    byId: db.query<TokenRow, [string]>('SELECT * FROM tokens WHERE id = ?1'),
    liveByUser: db.query<TokenRow, [string]>(
      'SELECT * FROM tokens WHERE user_id = ?1 AND revoked_at IS NULL ORDER BY created_at, id',
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
    byHash: (hash: Uint8Array) => q.byHash.get(hash) ?? undefined,
    /**
     * The token with this hash and its channel (none for a person token, or once the channel is
     * gone): what checking an agent's bearer reads, one round trip on Postgres (`pg-store.ts`).
     */
    withChannel: (hash: Uint8Array): TokenWithChannel | undefined => {
      const token = q.byHash.get(hash)
      if (!token) return undefined
      const channel = token.channel_id === null ? undefined : q.channel.get(token.channel_id)
      return { token, channel: channel ?? undefined }
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
