import type { SQL } from 'bun'
import { rateRefusal, secondsToWait } from '../core/rate-limit.ts'
import { pgRateBuckets } from './pg-rate-store.ts'

/**
 * The write rate limit kept in Postgres (`rate_buckets`, schema 14; issue 20), for several
 * instances on one database: each instance sees only its share of a channel's or a person's
 * writes, so a bucket in its memory would let N instances admit N times the limit.
 *
 * The same token bucket as `RateLimiter` (src/core/rate-limit.ts), with the same `count`,
 * `windowMs`, clock and 429: it holds at most `count`, gains `count` per `windowMs`, a burst of
 * `count` passes, a `count` of 0 turns it off (and asks the database nothing). Only the write
 * limit lives here: the other limits guard the server (its CPU, its mail, guessing against it),
 * not the data, so each instance keeping its own is what they are for, and they stay in memory.
 */
export class SharedRateLimiter {
  private takes = 0
  private sweeping = false
  private readonly buckets: ReturnType<typeof pgRateBuckets>

  constructor(
    sql: SQL,
    readonly count: number,
    readonly windowMs: number,
    private readonly now: () => number,
    /** Says what was limited, in the 429's error, as for `RateLimiter`. */
    private readonly what: string,
    /** Takes between two sweeps of this instance (see `sweep`). */
    private readonly sweepEvery = 1024,
  ) {
    this.buckets = pgRateBuckets(sql)
  }

  /** Takes one for `key`; rejects with 429 and Retry-After when none is left. */
  async take(key: string): Promise<void> {
    if (this.count <= 0) return
    // `at` is a BIGINT of milliseconds: a fractional clock (a test's) is cut to whole ones.
    const now = Math.floor(this.now())
    if (++this.takes % this.sweepEvery === 0) this.sweepLater(now)
    // A sweep (or a refill seen on a clock ahead of ours) can change the row between the two
    // statements of a refusal; then the take is tried again. Twice is plenty: each retry needs
    // another instance to have moved the row in that instant.
    for (let attempt = 0; attempt < 3; attempt++) {
      // The take is one statement, race-free across connections and instances (the store says how).
      if (await this.buckets.take(key, now, this)) return
      const tokens = await this.buckets.tokens(key, now, this)
      if (tokens !== undefined && tokens < 1) {
        throw rateRefusal(this.what, secondsToWait(tokens, this.count, this.windowMs))
      }
    }
    throw rateRefusal(this.what, 1)
  }

  /**
   * Deletes the buckets not touched for `windowMs`: they have refilled, and a full bucket is the
   * same as no row, so nothing changes for their keys; without it a client that never repeats
   * its key (a new channel each time) would grow the table without end. Race-free with takes:
   * a take that moved a row's `at` after the DELETE found it is re-checked under the row lock
   * (Postgres re-evaluates the WHERE on the newest version), so a bucket in use is never lost.
   * Returns how many rows went.
   */
  sweep(now = Math.floor(this.now())): Promise<number> {
    return this.buckets.sweep(now - this.windowMs)
  }

  /**
   * Sweeps without the take waiting for it (the index on `at` makes it a short statement on a
   * pooled connection of its own), one at a time per instance. A failed sweep is only a late
   * one: the next takes' sweep deletes the same rows, so its error is dropped here rather than
   * failing a write that has nothing to do with it.
   */
  private sweepLater(now: number): void {
    if (this.sweeping) return
    this.sweeping = true
    this.sweep(now)
      .catch(() => {})
      .finally(() => {
        this.sweeping = false
      })
  }
}
