import type { SQL } from 'bun'
import { changed, counted, every, first, inserted, type PgTwin, rowOf } from '../db/pg/twin.ts'
import type { InviteRow, InviteStore, UserRow, UserStore } from './store.ts'

/** `SELECT *` also brings migration 006's change counter, an int8 like the timestamps. */
type StoredUser = UserRow & { change_seq: number }
const user: (r: unknown) => UserRow = rowOf<StoredUser>({ ints: ['created_at', 'change_seq'] })

const invite = rowOf<InviteRow>({ ints: ['created_at', 'expires_at', 'used_at'], bytes: ['hash'] })

/**
 * The key of the advisory lock that queues the making of the owner: "ownr" in ASCII, as
 * migrate.ts's key spells "hark", so it is recognisable in pg_locks.
 */
const OWNER_LOCK = 0x6f776e72

/**
 * people/store.ts's userStore on Postgres (see db/pg/twin.ts); `sql` is a transaction.
 * users.email is CITEXT there (COLLATE NOCASE on SQLite): `email = $1` and the unique index
 * ignore case without a lower() here. One difference: NOCASE folds ASCII letters only, CITEXT
 * every letter the database's locale knows ('ÉLODIE@…' finds 'élodie@…' on Postgres alone).
 * Ties in creation time are ordered by id `COLLATE "C"`, byte order as SQLite's BINARY,
 * whatever collation the database was made with.
 */
export function pgUserStore(sql: SQL): PgTwin<UserStore> {
  const owners = () => counted(sql`SELECT count(*) AS n FROM users WHERE is_owner = 1`)
  return {
    insert: (u) =>
      inserted(
        sql,
        'users',
        { ...u, is_owner: u.is_owner ? 1 : 0, email_verified: u.email_verified ? 1 : 0 },
        user,
      ),
    async markVerified(id) {
      await sql`UPDATE users SET email_verified = 1 WHERE id = ${id}`
    },
    byId: (id) => first(sql`SELECT * FROM users WHERE id = ${id}`, user),
    byEmail: (email) => first(sql`SELECT * FROM users WHERE email = ${email}`, user),
    async hasOwner() {
      // Once there is an owner there always is one (remove spares the owner, nothing demotes),
      // so a count above zero is final and needs no lock: every request after setup ends here.
      if ((await owners()) > 0) return true
      // No owner yet: admission checks this and inserts the owner in one transaction. Under READ
      // COMMITTED two instances' first setups would both count none and both make an owner (on
      // SQLite the one writer makes them queue). The transaction-scoped advisory lock queues
      // them here until the first commits; the count after it, a new statement with a new
      // snapshot, then sees the owner it made.
      await sql`SELECT pg_advisory_xact_lock(${OWNER_LOCK}::bigint)`
      return (await owners()) > 0
    },
    all: () => every(sql`SELECT * FROM users ORDER BY created_at, id COLLATE "C"`, user),
    async remove(id) {
      return (await changed(sql`DELETE FROM users WHERE id = ${id} AND is_owner = 0`)) > 0
    },
  }
}

/** people/store.ts's inviteStore on Postgres; `hash` is BYTEA, answered as a Uint8Array. */
export function pgInviteStore(sql: SQL): PgTwin<InviteStore> {
  return {
    insert: (i) => inserted(sql, 'invites', i, invite),
    byHash: (hash) => first(sql`SELECT * FROM invites WHERE hash = ${hash}`, invite),
    byId: (id) => first(sql`SELECT * FROM invites WHERE id = ${id}`, invite),
    open: (now) =>
      every(
        sql`
        SELECT * FROM invites WHERE used_at IS NULL AND expires_at > ${now}
        ORDER BY created_at DESC`,
        invite,
      ),
    async use(id, now, userId) {
      // Two instances using one invite at once: the second UPDATE waits for the first's row
      // lock, then re-checks `used_at IS NULL` on the committed row (READ COMMITTED) and
      // changes nothing, so exactly one is told true, as on SQLite.
      const used = sql`
        UPDATE invites SET used_at = ${now}, used_by = ${userId}
        WHERE id = ${id} AND used_at IS NULL`
      return (await changed(used)) === 1
    },
    async remove(id) {
      return (await changed(sql`DELETE FROM invites WHERE id = ${id}`)) > 0
    },
  }
}
