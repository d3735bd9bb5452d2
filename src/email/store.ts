import type { Database } from 'bun:sqlite'

export interface EmailCodeRow {
  email: string
  purpose: string
  code_hash: Uint8Array
  /** Sealed (see `codes.ts`): what the code completes, e.g. a sign-up's invite. */
  data: string | null
  tries: number
  created_at: number
  expires_at: number
}

/** One live code per address and purpose (the table's key): a new one replaces the old. */
export function emailCodeStore(db: Database) {
  const q = {
    put: db.query<null, [string, string, Uint8Array, string, number, number]>(
      `INSERT INTO email_codes (email, purpose, code_hash, data, tries, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, 0, ?5, ?6)
       ON CONFLICT (email, purpose) DO UPDATE SET
         code_hash = excluded.code_hash, data = excluded.data, tries = 0,
         created_at = excluded.created_at, expires_at = excluded.expires_at`,
    ),
    get: db.query<EmailCodeRow, [string, string]>(
      'SELECT * FROM email_codes WHERE email = ?1 AND purpose = ?2',
    ),
    addTry: db.query<{ tries: number }, [string, string]>(
      `UPDATE email_codes SET tries = tries + 1 WHERE email = ?1 AND purpose = ?2
       RETURNING tries`,
    ),
    remove: db.query<null, [string, string]>(
      'DELETE FROM email_codes WHERE email = ?1 AND purpose = ?2',
    ),
    removeExpired: db.query<null, [number]>('DELETE FROM email_codes WHERE expires_at <= ?1'),
  }
  return {
    put: (c: Omit<EmailCodeRow, 'tries'> & { data: string }) =>
      q.put.run(c.email, c.purpose, c.code_hash, c.data, c.created_at, c.expires_at),
    get: (email: string, purpose: string) => q.get.get(email, purpose) ?? undefined,
    /** Counts a wrong try; returns the tries so far. */
    addTry: (email: string, purpose: string) => q.addTry.get(email, purpose)?.tries ?? 0,
    /** Consumes the code; false when it was already gone (used or replaced). */
    remove: (email: string, purpose: string) => q.remove.run(email, purpose).changes > 0,
    removeExpired: (now: number) => q.removeExpired.run(now).changes,
  }
}

export type EmailCodeStore = ReturnType<typeof emailCodeStore>
