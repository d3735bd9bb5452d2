import type { Database } from 'bun:sqlite'

/** The answer a key got: what a retry of the same request is answered with again. */
export interface KeyRow {
  channel_id: string
  key: string
  request_hash: string
  status: number
  response: string
  created_at: number
}

export function idempotencyStore(db: Database) {
  const q = {
    // Rows past their time may linger until the next sweep: `?3` (the cutoff) hides them.
    find: db.query<KeyRow, [string, string, number]>(
      'SELECT * FROM idempotency_keys WHERE channel_id = ?1 AND key = ?2 AND created_at > ?3',
    ),
    // Takes the key unless a live row holds it (an expired one is replaced): `changes` says
    // whether it was taken, so two writers can never both keep the same key.
    claim: db.query<null, [string, string, string, number, string, number, number]>(
      `INSERT INTO idempotency_keys (channel_id, key, request_hash, status, response, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6)
       ON CONFLICT (channel_id, key) DO UPDATE SET
         request_hash = excluded.request_hash, status = excluded.status,
         response = excluded.response, created_at = excluded.created_at
       WHERE idempotency_keys.created_at <= ?7`,
    ),
    sweep: db.query<null, [number]>('DELETE FROM idempotency_keys WHERE created_at <= ?1'),
  }
  return {
    /** The live answer under `key` in the channel: created after `cutoff`. */
    find: (channelId: string, key: string, cutoff: number) =>
      q.find.get(channelId, key, cutoff) ?? undefined,
    /** Stores an answer under a key that is free (or expired at `cutoff`); false if taken. */
    claim: (row: KeyRow, cutoff: number) =>
      q.claim.run(
        row.channel_id,
        row.key,
        row.request_hash,
        row.status,
        row.response,
        row.created_at,
        cutoff,
      ).changes > 0,
    /** Removes every key created at or before `cutoff`; how many went. */
    sweep: (cutoff: number) => q.sweep.run(cutoff).changes,
  }
}

export type IdempotencyStore = ReturnType<typeof idempotencyStore>
