import type { Database } from 'bun:sqlite'

export interface PasskeyRow {
  /** The WebAuthn credential id, base64url. */
  id: string
  user_id: string
  /** The COSE public key, as the authenticator gave it. */
  public_key: Uint8Array
  counter: number
  /** JSON array of transports (`internal`, `hybrid`, `usb`...), as a hint for later ceremonies. */
  transports: string | null
  device_type: string | null
  backed_up: number
  name: string
  created_at: number
  last_used_at: number | null
}

export function passkeyStore(db: Database) {
  const q = {
    insert: db.query<
      PasskeyRow,
      [string, string, Uint8Array, number, string | null, string | null, number, string, number]
    >(
      `INSERT INTO passkeys
         (id, user_id, public_key, counter, transports, device_type, backed_up, name, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING *`,
    ),
    byId: db.query<PasskeyRow, [string]>('SELECT * FROM passkeys WHERE id = ?1'),
    byUser: db.query<PasskeyRow, [string]>(
      'SELECT * FROM passkeys WHERE user_id = +?1 ORDER BY created_at, id',
    ),
    countByUser: db.query<{ n: number }, [string]>(
      'SELECT count(*) AS n FROM passkeys WHERE user_id = ?1',
    ),
    // The counter only moves forward: a use whose counter is not above the stored one (unless
    // the authenticator keeps no counter at all, 0) changes nothing, even in a race.
    recordUse: db.query<PasskeyRow, [string, number, string, number, number]>(
      `UPDATE passkeys SET counter = ?2, device_type = ?3, backed_up = ?4, last_used_at = ?5
       WHERE id = ?1 AND (?2 = 0 AND counter = 0 OR counter < ?2) RETURNING *`,
    ),
    rename: db.query<PasskeyRow, [string, string, string]>(
      'UPDATE passkeys SET name = ?3 WHERE id = ?1 AND user_id = ?2 RETURNING *',
    ),
    remove: db.query<null, [string, string]>('DELETE FROM passkeys WHERE id = ?1 AND user_id = ?2'),
    removeByUser: db.query<null, [string]>('DELETE FROM passkeys WHERE user_id = ?1'),
  }
  return {
    insert: (p: Omit<PasskeyRow, 'last_used_at'>) =>
      q.insert.get(
        p.id,
        p.user_id,
        p.public_key,
        p.counter,
        p.transports,
        p.device_type,
        p.backed_up,
        p.name,
        p.created_at,
      ) as PasskeyRow,
    byId: (id: string) => q.byId.get(id) ?? undefined,
    byUser: (userId: string) => q.byUser.all(userId),
    countByUser: (userId: string) => q.countByUser.get(userId)?.n ?? 0,
    /** The row after a login; undefined when the counter did not move forward. */
    recordUse: (id: string, counter: number, deviceType: string, backedUp: boolean, now: number) =>
      q.recordUse.get(id, counter, deviceType, backedUp ? 1 : 0, now) ?? undefined,
    rename: (id: string, userId: string, name: string) =>
      q.rename.get(id, userId, name) ?? undefined,
    remove: (id: string, userId: string) => q.remove.run(id, userId).changes > 0,
    /** Removes every passkey of the person; returns how many. */
    removeByUser: (userId: string) => q.removeByUser.run(userId).changes,
  }
}

export type PasskeyStore = ReturnType<typeof passkeyStore>

export type ChallengePurpose = 'register' | 'login' | 'add' | 'link'

export interface ChallengeRow {
  id: string
  purpose: ChallengePurpose
  /** The base64url challenge the authenticator must sign. */
  challenge: string
  /** What the ceremony is for (the sign-up's email and admission, the person adding a key), sealed. */
  data: string | null
  expires_at: number
}

export function challengeStore(db: Database) {
  const q = {
    insert: db.query<null, [string, string, string, string | null, number]>(
      `INSERT INTO challenges (id, purpose, challenge, data, expires_at)
       VALUES (?1, ?2, ?3, ?4, ?5)`,
    ),
    // Deleting and returning in one statement makes a challenge single-use even under races.
    take: db.query<ChallengeRow, [string]>('DELETE FROM challenges WHERE id = ?1 RETURNING *'),
    removeExpired: db.query<null, [number]>('DELETE FROM challenges WHERE expires_at <= ?1'),
    pendingAnonymous: db.query<{ n: number; first: number | null }, [number]>(
      `SELECT count(*) AS n, min(expires_at) AS first FROM challenges
       WHERE purpose IN ('register', 'login') AND expires_at > +?1`,
    ),
  }
  return {
    insert: (c: ChallengeRow): void => {
      q.insert.run(c.id, c.purpose, c.challenge, c.data, c.expires_at)
    },
    /** Removes the challenge and returns it: whatever happens next, it cannot be used again. */
    take: (id: string) => q.take.get(id) ?? undefined,
    removeExpired: (now: number): void => {
      q.removeExpired.run(now)
    },
    /**
     * The ceremonies anyone may start (sign-up, login) still waiting for their answer: how many,
     * and when the first of them expires.
     */
    pendingAnonymous: (now: number) => {
      const row = q.pendingAnonymous.get(now)
      return { count: row?.n ?? 0, firstExpiry: row?.first ?? undefined }
    },
  }
}

export type ChallengeStore = ReturnType<typeof challengeStore>
