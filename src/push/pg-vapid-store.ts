import type { SQL } from 'bun'

/** The `vapid_keys` row as the push domain reads and writes it (`created_at` in ms). */
export interface VapidRow {
  public_key: string
  private_key: string
  created_at: number
}

/**
 * The one `vapid_keys` row (id 1, schema 14) every instance on a Postgres signs pushes with
 * (push/vapid.ts holds it). Postgres only: on SQLite the pair lives in the data directory's
 * vapid.json, so there is no SQLite twin. `sql` is a pool or a transaction.
 */
export function pgVapidRow(sql: SQL) {
  return {
    /** The stored pair, or undefined when no instance has made one yet. */
    async read(): Promise<VapidRow | undefined> {
      const [row] = await sql<(Omit<VapidRow, 'created_at'> & { created_at: string })[]>`
        SELECT public_key, private_key, created_at FROM vapid_keys WHERE id = 1`
      // Bun.sql hands BIGINT back as a string.
      return row ? { ...row, created_at: Number(row.created_at) } : undefined
    },
    /** Stores `row` unless a pair is there already (instances starting together). */
    async insertIfAbsent(row: VapidRow): Promise<void> {
      await sql`INSERT INTO vapid_keys (id, public_key, private_key, created_at)
                VALUES (1, ${row.public_key}, ${row.private_key}, ${row.created_at})
                ON CONFLICT (id) DO NOTHING`
    },
    /** Stores `row`, replacing any pair there. */
    async put(row: VapidRow): Promise<void> {
      await sql`INSERT INTO vapid_keys (id, public_key, private_key, created_at)
                VALUES (1, ${row.public_key}, ${row.private_key}, ${row.created_at})
                ON CONFLICT (id) DO UPDATE SET public_key = EXCLUDED.public_key,
                  private_key = EXCLUDED.private_key, created_at = EXCLUDED.created_at`
    },
  }
}
