import type { Database } from 'bun:sqlite'

export type PairingStatus = 'pending' | 'approved' | 'denied' | 'redeemed'

export interface PairingRow {
  id: string
  device_hash: Uint8Array
  user_code: string
  label: string | null
  /** The host name the CLI sent (a claim), and the client address the server saw. */
  host: string | null
  address: string | null
  status: PairingStatus
  user_id: string | null
  channel_id: string | null
  created_at: number
  expires_at: number
}

export function pairingStore(db: Database) {
  const q = {
    insert: db.query<
      PairingRow,
      [string, Uint8Array, string, string | null, string | null, string | null, number, number]
    >(
      `INSERT INTO pairings
         (id, device_hash, user_code, label, host, address, status, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8) RETURNING *`,
    ),
    pending: db.query<PairingRow, [number]>(
      `SELECT * FROM pairings WHERE status = 'pending' AND expires_at > +?1
       ORDER BY created_at, id`,
    ),
    byDevice: db.query<PairingRow, [Uint8Array]>('SELECT * FROM pairings WHERE device_hash = ?1'),
    byUserCode: db.query<PairingRow, [string]>('SELECT * FROM pairings WHERE user_code = ?1'),
    settle: db.query<PairingRow, [string, string, string | null, string | null]>(
      `UPDATE pairings SET status = ?2, user_id = ?3, channel_id = ?4
       WHERE id = ?1 AND status = 'pending' RETURNING *`,
    ),
    redeem: db.query<PairingRow, [string]>(
      "UPDATE pairings SET status = 'redeemed' WHERE id = ?1 AND status = 'approved' RETURNING *",
    ),
    removeExpired: db.query<null, [number]>('DELETE FROM pairings WHERE expires_at <= ?1'),
  }
  return {
    insert: (
      p: Pick<
        PairingRow,
        | 'id'
        | 'device_hash'
        | 'user_code'
        | 'label'
        | 'host'
        | 'address'
        | 'created_at'
        | 'expires_at'
      >,
    ) =>
      q.insert.get(
        p.id,
        p.device_hash,
        p.user_code,
        p.label,
        p.host,
        p.address,
        p.created_at,
        p.expires_at,
      ) as PairingRow,
    /** Pairings still waiting for an answer at `now`, oldest first. */
    pending: (now: number) => q.pending.all(now),
    byDevice: (hash: Uint8Array) => q.byDevice.get(hash) ?? undefined,
    byUserCode: (code: string) => q.byUserCode.get(code) ?? undefined,
    /** pending → approved | denied; undefined when it was no longer pending. */
    settle: (
      id: string,
      status: 'approved' | 'denied',
      userId: string | null,
      channelId: string | null,
    ) => q.settle.get(id, status, userId, channelId) ?? undefined,
    /** approved → redeemed, exactly once. */
    redeem: (id: string) => q.redeem.get(id) ?? undefined,
    removeExpired: (now: number): void => {
      q.removeExpired.run(now)
    },
  }
}

export type PairingStore = ReturnType<typeof pairingStore>
