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
  /** The passkey's assertion over the ciphertext (JSON), kept and dropped with it. */
  proof: string | null
  created_at: number
  updated_at: number
}

export type NewSecret = Omit<SecretRow, 'status' | 'ciphertext' | 'proof' | 'updated_at'>

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
    // Every transition writes the ciphertext (and its proof) too: they exist only while
    // 'fulfilled'. Only from the status the caller saw: a request moved meanwhile is left as is.
    setStatus: db.query<
      SecretRow,
      [string, SecretStatus, SecretStatus, string | null, number, string | null]
    >(
      `UPDATE secret_requests SET status = ?3, ciphertext = ?4, updated_at = ?5, proof = ?6
       WHERE id = ?1 AND status = ?2 RETURNING *`,
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
    /**
     * Moves the request from status `from` to `status`; undefined when it is not (or no longer)
     * in `from`: a fulfilled secret is delivered once even if two reads race for it.
     */
    setStatus: (
      id: string,
      from: SecretStatus,
      status: SecretStatus,
      ciphertext: string | null,
      now: number,
      proof: string | null = null,
    ): SecretRow | undefined =>
      q.setStatus.get(id, from, status, ciphertext, now, proof) ?? undefined,
  }
}

export type SecretStore = ReturnType<typeof secretStore>
