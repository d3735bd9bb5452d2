import type { Database } from 'bun:sqlite'

export interface EmailCodeRow {
  id: string
  email: string
  purpose: string
  code_hash: Uint8Array
  /**
   * Sealed (access/keys/keyring.ts): what the code completes, e.g. a sign-up's invite. Its period
   * names the keys `code_hash` and `asked_from` were made with.
   */
  data: string
  /** Who asked for the code: a keyed hash of the client address (`askerTag`), not the address. */
  asked_from: Uint8Array
  /** Wrong tries from the address that asked for the code. */
  tries: number
  /** Wrong tries from every other address, together. */
  other_tries: number
  created_at: number
  expires_at: number
}

/**
 * Emailed codes: several may be live for one address and purpose (a new one does not replace
 * those already mailed); the right one consumes them all.
 */
export function emailCodeStore(db: Database) {
  const q = {
    insert: db.query<
      null,
      [string, string, string, Uint8Array, string, Uint8Array, number, number]
    >(
      `INSERT INTO email_codes
         (id, email, purpose, code_hash, data, asked_from, tries, other_tries, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0, 0, ?7, ?8)`,
    ),
    byAddress: db.query<EmailCodeRow, [string, string]>(
      'SELECT * FROM email_codes WHERE email = +?1 AND purpose = +?2 ORDER BY created_at, id',
    ),
    addTry: db.query<null, [string]>('UPDATE email_codes SET tries = tries + 1 WHERE id = ?1'),
    addOtherTry: db.query<null, [string]>(
      'UPDATE email_codes SET other_tries = other_tries + 1 WHERE id = ?1',
    ),
    remove: db.query<null, [string]>('DELETE FROM email_codes WHERE id = ?1'),
    removeAll: db.query<null, [string, string]>(
      'DELETE FROM email_codes WHERE email = ?1 AND purpose = ?2',
    ),
    removeExpired: db.query<null, [number]>('DELETE FROM email_codes WHERE expires_at <= ?1'),
  }
  return {
    insert: (c: Omit<EmailCodeRow, 'tries' | 'other_tries'>): void => {
      q.insert.run(
        c.id,
        c.email,
        c.purpose,
        c.code_hash,
        c.data,
        c.asked_from,
        c.created_at,
        c.expires_at,
      )
    },
    /** Every code for the address and purpose, expired ones too, oldest first. */
    byAddress: (email: string, purpose: string) => q.byAddress.all(email, purpose),
    /** Counts a wrong try from the address that asked for the code. */
    addTry: (id: string): void => {
      q.addTry.run(id)
    },
    /** Counts a wrong try from any other address. */
    addOtherTry: (id: string): void => {
      q.addOtherTry.run(id)
    },
    /** Drops one code (a sign-up code whose mail could not be sent). */
    remove: (id: string) => q.remove.run(id).changes > 0,
    /** Consumes every code for the address and purpose; false when none was left. */
    removeAll: (email: string, purpose: string) => q.removeAll.run(email, purpose).changes > 0,
    removeExpired: (now: number) => q.removeExpired.run(now).changes,
  }
}

export type EmailCodeStore = ReturnType<typeof emailCodeStore>
