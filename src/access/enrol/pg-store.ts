import type { SQL } from 'bun'
import { bytes, ints, type PgTwin } from '../../server/db/pg/twin.ts'
import type { JoinLinkRow, JoinLinkStore } from './join-store.ts'
import type { SignInLinkRow, SignInLinkStore } from './sign-in-store.ts'
import type { PairingRow, PairingStore } from './store.ts'

/**
 * The enrolment stores on Postgres (see server/db/pg/twin.ts): pairings, join links and
 * sign-in links. Each "exactly once" step is one conditional UPDATE, as on SQLite: on
 * Postgres a second instance's UPDATE waits on the first's row lock, then re-checks the
 * condition against the committed row and changes nothing.
 */
const pairing = (r: unknown) =>
  bytes<PairingRow>(ints<PairingRow>(r, ['created_at', 'expires_at']), ['device_hash'])
const joinLink = (r: unknown) =>
  bytes<JoinLinkRow>(ints<JoinLinkRow>(r, ['created_at', 'expires_at', 'used_at']), ['hash'])
const signInLink = (r: unknown) =>
  bytes<SignInLinkRow>(ints<SignInLinkRow>(r, ['created_at', 'expires_at', 'used_at']), ['hash'])

const maybe = <T>(r: unknown, as: (r: unknown) => T) => (r ? as(r) : undefined)

export function pgPairingStore(sql: SQL): PgTwin<PairingStore> {
  return {
    async insert(p) {
      const [made] = await sql`
        INSERT INTO pairings (id, device_hash, user_code, label, status, created_at, expires_at)
        VALUES (${p.id}, ${p.device_hash}, ${p.user_code}, ${p.label}, 'pending', ${p.created_at},
                ${p.expires_at})
        RETURNING *`
      return pairing(made)
    },
    async byDevice(hash) {
      return maybe((await sql`SELECT * FROM pairings WHERE device_hash = ${hash}`)[0], pairing)
    },
    async byUserCode(code) {
      return maybe((await sql`SELECT * FROM pairings WHERE user_code = ${code}`)[0], pairing)
    },
    async settle(id, status, userId, channelId) {
      const [settled] = await sql`
        UPDATE pairings SET status = ${status}, user_id = ${userId}, channel_id = ${channelId}
        WHERE id = ${id} AND status = 'pending' RETURNING *`
      return maybe(settled, pairing)
    },
    async redeem(id) {
      const [redeemed] = await sql`
        UPDATE pairings SET status = 'redeemed' WHERE id = ${id} AND status = 'approved'
        RETURNING *`
      return maybe(redeemed, pairing)
    },
    async removeExpired(now) {
      await sql`DELETE FROM pairings WHERE expires_at <= ${now}`
    },
  }
}

export function pgJoinLinkStore(sql: SQL): PgTwin<JoinLinkStore> {
  return {
    async insert(j) {
      const [made] = await sql`
        INSERT INTO join_links (id, hash, user_id, channel_id, label, created_at, expires_at)
        VALUES (${j.id}, ${j.hash}, ${j.user_id}, ${j.channel_id}, ${j.label}, ${j.created_at},
                ${j.expires_at})
        RETURNING *`
      return joinLink(made)
    },
    async byHash(hash) {
      return maybe((await sql`SELECT * FROM join_links WHERE hash = ${hash}`)[0], joinLink)
    },
    async use(id, now) {
      const used = await sql`
        UPDATE join_links SET used_at = ${now} WHERE id = ${id} AND used_at IS NULL`
      return used.count === 1
    },
  }
}

export function pgSignInLinkStore(sql: SQL): PgTwin<SignInLinkStore> {
  return {
    async insert(l) {
      const [made] = await sql`
        INSERT INTO sign_in_links (id, hash, user_id, created_at, expires_at)
        VALUES (${l.id}, ${l.hash}, ${l.user_id}, ${l.created_at}, ${l.expires_at})
        RETURNING *`
      return signInLink(made)
    },
    async byHash(hash) {
      return maybe((await sql`SELECT * FROM sign_in_links WHERE hash = ${hash}`)[0], signInLink)
    },
    async byId(id) {
      return maybe((await sql`SELECT * FROM sign_in_links WHERE id = ${id}`)[0], signInLink)
    },
    async removeForUser(userId) {
      return (await sql`DELETE FROM sign_in_links WHERE user_id = ${userId}`).count
    },
    async use(id, now) {
      const used = await sql`
        UPDATE sign_in_links SET used_at = ${now}
        WHERE id = ${id} AND used_at IS NULL AND expires_at > ${now}`
      return used.count === 1
    },
  }
}
