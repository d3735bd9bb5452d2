import type { Database } from 'bun:sqlite'

/** A row of `policies`, as stored (schema 16). */
export interface PolicyRow {
  id: string
  user_id: string
  /** Null: every channel of the person (a rule "for all my agents"). */
  channel_id: string | null
  /** The signed claim, canonical JSON (src/shared/policy.ts), handed out byte for byte. */
  claim: string
  /** The WebAuthn assertion over it (JSON). */
  proof: string
  created_at: number
  expires_at: number
  /** The signed revocation `{claim, proof}` (JSON), once revoked. */
  revocation: string | null
  revoked_at: number | null
  uses: number
  last_used_at: number | null
}

export type NewPolicy = Omit<PolicyRow, 'revocation' | 'revoked_at' | 'uses' | 'last_used_at'>

/** Every SQL statement on policies, prepared once per database. */
export function policyStore(db: Database) {
  const q = {
    insert: db.query<PolicyRow, [string, string, string | null, string, string, number, number]>(
      `INSERT INTO policies (id, user_id, channel_id, claim, proof, created_at, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) RETURNING *`,
    ),
    byId: db.query<PolicyRow, [string]>('SELECT * FROM policies WHERE id = ?1'),
    ofUser: db.query<PolicyRow, [string, number]>(
      `SELECT * FROM policies WHERE user_id = +?1 AND expires_at > +?2
       ORDER BY created_at DESC, id`,
    ),
    // A channel's own and the person's "all my agents" ones; revoked ones too, until they
    // expire, so an agent learns of the revocation.
    forChannel: db.query<PolicyRow, [string, string, number]>(
      `SELECT * FROM policies WHERE user_id = +?1 AND (channel_id = +?2 OR channel_id IS NULL)
         AND expires_at > +?3
       ORDER BY created_at, id`,
    ),
    revoke: db.query<PolicyRow, [string, string, number]>(
      `UPDATE policies SET revocation = ?2, revoked_at = ?3
       WHERE id = ?1 AND revoked_at IS NULL RETURNING *`,
    ),
    used: db.query<PolicyRow, [string, number]>(
      `UPDATE policies SET uses = uses + 1, last_used_at = ?2 WHERE id = ?1 RETURNING *`,
    ),
    eraseExpired: db.query<{ n: number }, [number]>(
      'DELETE FROM policies WHERE expires_at <= ?1 RETURNING 1 AS n',
    ),
  }
  return {
    insert: (p: NewPolicy) =>
      q.insert.get(
        p.id,
        p.user_id,
        p.channel_id,
        p.claim,
        p.proof,
        p.created_at,
        p.expires_at,
      ) as PolicyRow,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    /** The person's policies not expired at `now`, newest first (revoked ones included). */
    ofUser: (userId: string, now: number) => q.ofUser.all(userId, now),
    /** What an agent of `channelId` is handed: its own and the person's all-agents ones. */
    forChannel: (userId: string, channelId: string, now: number) =>
      q.forChannel.all(userId, channelId, now),
    /** Undefined when there is no such policy or it is revoked already. */
    revoke: (id: string, revocation: string, at: number) =>
      q.revoke.get(id, revocation, at) ?? undefined,
    recordUse: (id: string, at: number) => q.used.get(id, at) ?? undefined,
    /** Removes the policies expired at `now`; how many. */
    eraseExpired: (now: number) => q.eraseExpired.all(now).length,
  }
}

export type PolicyStore = ReturnType<typeof policyStore>
