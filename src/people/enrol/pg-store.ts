import type { SQL } from 'bun'
import { changed, every, first, inserted, type PgTwin, rowOf } from '../../db/pg/twin.ts'
import type { JoinLinkRow, JoinLinkStore } from './join-store.ts'
import type { SignInLinkRow, SignInLinkStore } from './sign-in-store.ts'
import type { PairingRow, PairingStore } from './store.ts'

/**
 * The enrolment stores on Postgres (see db/pg/twin.ts): pairings, join links and
 * sign-in links. Each "exactly once" step is one conditional UPDATE, as on SQLite: on
 * Postgres a second instance's UPDATE waits on the first's row lock, then re-checks the
 * condition against the committed row and changes nothing.
 */
const pairing = rowOf<PairingRow>({ ints: ['created_at', 'expires_at'], bytes: ['device_hash'] })
const link = { ints: ['created_at', 'expires_at', 'used_at'], bytes: ['hash'] } as const
const joinLink = rowOf<JoinLinkRow>(link)
const signInLink = rowOf<SignInLinkRow>(link)

export function pgPairingStore(sql: SQL): PgTwin<PairingStore> {
  return {
    insert: (p) => inserted(sql, 'pairings', { ...p, status: 'pending' }, pairing),
    byDevice: (hash) => first(sql`SELECT * FROM pairings WHERE device_hash = ${hash}`, pairing),
    byUserCode: (code) => first(sql`SELECT * FROM pairings WHERE user_code = ${code}`, pairing),
    pending: (now) =>
      every(
        sql`
        SELECT * FROM pairings WHERE status = 'pending' AND expires_at > ${now}
        ORDER BY created_at, id`,
        pairing,
      ),
    settle: (id, status, userId, channelId) =>
      first(
        sql`
        UPDATE pairings SET status = ${status}, user_id = ${userId}, channel_id = ${channelId}
        WHERE id = ${id} AND status = 'pending' RETURNING *`,
        pairing,
      ),
    redeem: (id) =>
      first(
        sql`
        UPDATE pairings SET status = 'redeemed' WHERE id = ${id} AND status = 'approved'
        RETURNING *`,
        pairing,
      ),
    async removeExpired(now) {
      await sql`DELETE FROM pairings WHERE expires_at <= ${now}`
    },
  }
}

export function pgJoinLinkStore(sql: SQL): PgTwin<JoinLinkStore> {
  return {
    insert: (j) => inserted(sql, 'join_links', j, joinLink),
    byHash: (hash) => first(sql`SELECT * FROM join_links WHERE hash = ${hash}`, joinLink),
    async use(id, now) {
      const used = sql`UPDATE join_links SET used_at = ${now} WHERE id = ${id} AND used_at IS NULL`
      return (await changed(used)) === 1
    },
  }
}

export function pgSignInLinkStore(sql: SQL): PgTwin<SignInLinkStore> {
  return {
    insert: (l) => inserted(sql, 'sign_in_links', l, signInLink),
    byHash: (hash) => first(sql`SELECT * FROM sign_in_links WHERE hash = ${hash}`, signInLink),
    byId: (id) => first(sql`SELECT * FROM sign_in_links WHERE id = ${id}`, signInLink),
    removeForUser: (userId) => changed(sql`DELETE FROM sign_in_links WHERE user_id = ${userId}`),
    async use(id, now) {
      const used = sql`
        UPDATE sign_in_links SET used_at = ${now}
        WHERE id = ${id} AND used_at IS NULL AND expires_at > ${now}`
      return (await changed(used)) === 1
    },
  }
}
