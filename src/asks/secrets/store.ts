import type { Database } from 'bun:sqlite'

export type SecretStatus = 'pending' | 'fulfilled' | 'delivered' | 'cancelled'

/** A row of `secret_requests`, as stored. */
export interface SecretRow {
  id: string
  channel_id: string
  message_id: string
  name: string
  description: string | null
  public_key: string
  fingerprint: string
  status: SecretStatus
  ciphertext: string | null
  created_at: number
  updated_at: number
}

export type NewSecret = Omit<SecretRow, 'status' | 'ciphertext' | 'updated_at'>

/** Every SQL statement on secret requests, prepared once per database. */
export function secretStore(db: Database) {
  const q = {
    insert: db.query<
      SecretRow,
      [string, string, string, string, string | null, string, string, number]
    >(
      `INSERT INTO secret_requests (id, channel_id, message_id, name, description, public_key,
         fingerprint, status, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, 'pending', ?8, ?8) RETURNING *`,
    ),
    byId: db.query<SecretRow, [string]>('SELECT * FROM secret_requests WHERE id = ?1'),
    // Every transition writes the ciphertext too: it exists only while 'fulfilled'.
    setStatus: db.query<SecretRow, [string, SecretStatus, string | null, number]>(
      `UPDATE secret_requests SET status = ?2, ciphertext = ?3, updated_at = ?4
       WHERE id = ?1 RETURNING *`,
    ),
  }
  return {
    insert: (s: NewSecret) =>
      q.insert.get(
        s.id,
        s.channel_id,
        s.message_id,
        s.name,
        s.description,
        s.public_key,
        s.fingerprint,
        s.created_at,
      ) as SecretRow,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    setStatus: (id: string, status: SecretStatus, ciphertext: string | null, now: number) =>
      q.setStatus.get(id, status, ciphertext, now) as SecretRow,
  }
}
