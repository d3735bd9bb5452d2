import type { SQL } from 'bun'

/** A bucket's shape: holds at most `count`, gains `count` per `windowMs`. */
export interface BucketShape {
  count: number
  windowMs: number
}

/**
 * The `rate_buckets` table (schema 14; issue 20), Postgres only: the write limit shared by the
 * instances on one database (access/shared-limit.ts says how the token bucket works). `sql` is
 * a pool: each statement stands alone and is race-free on its own.
 */
export function pgRateBuckets(sql: SQL) {
  return {
    /**
     * Refills `key`'s bucket to `now` and takes one when one is there, in one statement (the
     * upsert locks the row; the `WHERE` of `DO UPDATE` takes only when a token is there); a key
     * without a row is a full bucket, so its first take stores `count - 1`. A refusal makes no
     * new row version. The elapsed time is never negative and `at` never goes back, so clocks
     * of instances that disagree by a little neither drain nor double-refill a bucket. True
     * when one was taken.
     */
    async take(key: string, now: number, { count, windowMs }: BucketShape): Promise<boolean> {
      const rows = await sql`
        INSERT INTO rate_buckets AS b (key, tokens, at)
        VALUES (${key}, ${count - 1}::double precision, ${now}::bigint)
        ON CONFLICT (key) DO UPDATE
          SET tokens = LEAST(${count}::double precision,
                b.tokens + GREATEST(0, ${now}::bigint - b.at) * ${count}::double precision
                  / ${windowMs}::double precision) - 1,
              at = GREATEST(b.at, ${now}::bigint)
          WHERE LEAST(${count}::double precision,
                b.tokens + GREATEST(0, ${now}::bigint - b.at) * ${count}::double precision
                  / ${windowMs}::double precision) >= 1
        RETURNING tokens`
      return rows.length > 0
    },

    /** The key's tokens refilled to `now` (without storing them); undefined when it has no row. */
    async tokens(key: string, now: number, { count, windowMs }: BucketShape) {
      const [row] = await sql`
        SELECT LEAST(${count}::double precision,
            tokens + GREATEST(0, ${now}::bigint - at) * ${count}::double precision
              / ${windowMs}::double precision) AS tokens
          FROM rate_buckets WHERE key = ${key}`
      return row ? Number(row.tokens) : undefined
    },

    /**
     * Deletes the buckets last touched at or before `before`; a take that moved a row's `at`
     * after the DELETE found it is re-checked under the row lock (Postgres re-evaluates the
     * WHERE on the newest version), so a bucket in use is never lost. Returns how many went.
     */
    async sweep(before: number): Promise<number> {
      const rows = await sql`
        DELETE FROM rate_buckets WHERE at <= ${before}::bigint RETURNING key`
      return rows.length
    },
  }
}
