import type { SQL } from 'bun'
import { changed, every, type PgTwin, rowOf } from '../../../db/pg/twin.ts'
import type { EmailCodeRow, EmailCodeStore } from './store.ts'

const row = rowOf<EmailCodeRow>({
  ints: ['tries', 'other_tries', 'created_at', 'expires_at'],
  bytes: ['code_hash', 'asked_from'],
})

/**
 * people/enrol/email/store.ts on Postgres (see db/pg/twin.ts); writes in a transaction.
 * `email` is CITEXT there (NOCASE on SQLite): an address is found whatever its case.
 */
export function pgEmailCodeStore(sql: SQL): PgTwin<EmailCodeStore> {
  return {
    async insert(c) {
      await sql`
        INSERT INTO email_codes
          (id, email, purpose, code_hash, data, asked_from, tries, other_tries, created_at, expires_at)
        VALUES (${c.id}, ${c.email}, ${c.purpose}, ${c.code_hash}, ${c.data}, ${c.asked_from}, 0, 0,
                ${c.created_at}, ${c.expires_at})`
    },
    byAddress: (email, purpose) =>
      every(
        sql`
        SELECT * FROM email_codes WHERE email = ${email} AND purpose = ${purpose}
        ORDER BY created_at, id`,
        row,
      ),
    // Increments in the statement, never read-modify-write: two instances counting wrong tries
    // at once both count (the second UPDATE waits for the first's row and adds to its value).
    async addTry(id) {
      await sql`UPDATE email_codes SET tries = tries + 1 WHERE id = ${id}`
    },
    async addOtherTry(id) {
      await sql`UPDATE email_codes SET other_tries = other_tries + 1 WHERE id = ${id}`
    },
    async remove(id) {
      return (await changed(sql`DELETE FROM email_codes WHERE id = ${id}`)) > 0
    },
    async removeAll(email, purpose) {
      const gone = sql`DELETE FROM email_codes WHERE email = ${email} AND purpose = ${purpose}`
      return (await changed(gone)) > 0
    },
    removeExpired: (now) => changed(sql`DELETE FROM email_codes WHERE expires_at <= ${now}`),
  }
}
