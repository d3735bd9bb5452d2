import type { Database } from 'bun:sqlite'

/** One key: what it is for, the period it seals in (its id in sealed values), its bytes. */
export interface ServerKeyRow {
  purpose: string
  /** UTC days since the epoch (`keyring.ts`, KEY_PERIOD_MS). */
  period: number
  key: Uint8Array
  created_at: number
}

/** The server's secret keys (schema 13), shared by every instance on the database. */
export function serverKeyStore(db: Database) {
  const q = {
    // Whoever comes first makes the key; everyone else keeps theirs out and reads that one.
    add: db.query<null, [string, number, Uint8Array, number]>(
      `INSERT INTO server_keys (purpose, period, key, created_at) VALUES (?1, ?2, ?3, ?4)
       ON CONFLICT (purpose, period) DO NOTHING`,
    ),
    ofPeriod: db.query<{ purpose: string; key: Uint8Array }, [number]>(
      'SELECT purpose, key FROM server_keys WHERE period = ?1',
    ),
    oldest: db.query<{ period: number | null }, []>(
      'SELECT min(period) AS period FROM server_keys',
    ),
    // Overwritten in place before the row goes: a deleted row's bytes would otherwise stay in
    // the page's free space, in the file and in the write-ahead log's copy of the page.
    blank: db.query<null, [number]>(
      'UPDATE server_keys SET key = zeroblob(length(key)) WHERE period < ?1',
    ),
    remove: db.query<null, [number]>('DELETE FROM server_keys WHERE period < ?1'),
    all: db.query<ServerKeyRow, []>('SELECT * FROM server_keys ORDER BY period, purpose'),
  }
  return {
    /** Adds the key unless one is there for the purpose and period already. */
    add: (purpose: string, period: number, key: Uint8Array, now: number): void => {
      q.add.run(purpose, period, key, now)
    },
    /** The keys of one period, by purpose. */
    ofPeriod: (period: number) =>
      new Map(q.ofPeriod.all(period).map((row) => [row.purpose, row.key])),
    /** The earliest period any key is kept for; undefined when there is none. */
    oldest: () => q.oldest.get()?.period ?? undefined,
    /** Erases every key of a period before `period`; returns how many. */
    eraseBefore: (period: number) => {
      q.blank.run(period)
      return q.remove.run(period).changes
    },
    /** Every key (tests and the keys' own checks). */
    all: () => q.all.all(),
  }
}

export type ServerKeyStore = ReturnType<typeof serverKeyStore>
