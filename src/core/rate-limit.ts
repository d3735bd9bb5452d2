import { HarkError } from './errors.ts'

/**
 * The one rate limiter: `count` per `windowMs` for each key, refilled continuously, a token
 * bucket that holds at most `count` and gains one every `windowMs / count`. So a burst of
 * `count` passes at once, and after that one per `windowMs / count`; a `count` of 0 turns it off
 * (`--write-limit 0`). In memory on purpose: it guards the server, not the data, and a restart
 * forgetting it is harmless. (The write limit on Postgres, shared by several instances, is the
 * same bucket kept in the database: `SharedRateLimiter`, src/access/shared-limit.ts.)
 *
 * Limits that refuse use `take` (or `check` then `spend`, to count only some outcomes: a limit on
 * misses checks before the lookup and spends after a miss). Limits that must not show when they
 * are reached (a mail that is quietly not sent) use `tryTake`.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  private calls = 0

  constructor(
    readonly count: number,
    readonly windowMs: number,
    private readonly now: () => number,
    /** Says what was limited, in the 429's error: "too many codes asked from your network address". */
    private readonly what: string,
  ) {}

  /** Seconds until one is left for `key`; 0 when one is left now. */
  wait(key: string): number {
    if (this.count <= 0) return 0
    const tokens = this.refill(key)
    if (tokens >= 1) return 0
    return secondsToWait(tokens, this.count, this.windowMs)
  }

  /** Throws 429 with Retry-After when none is left for `key`; takes nothing. */
  check(key: string): void {
    const seconds = this.wait(key)
    if (seconds > 0) throw this.refusal(seconds)
  }

  /** Takes one for `key`; throws 429 with Retry-After when none is left. */
  take(key: string): void {
    this.check(key)
    this.spend(key)
  }

  /** Takes one for `key` when one is left; says whether it did. Never throws. */
  tryTake(key: string): boolean {
    if (this.wait(key) > 0) return false
    this.spend(key)
    return true
  }

  /** Counts one against `key` whether or not one is left (never below empty). */
  spend(key: string): void {
    if (this.count <= 0) return
    const tokens = this.refill(key)
    const b = this.buckets.get(key)
    if (b) b.tokens = Math.max(0, tokens - 1)
  }

  /** The 429 this limiter answers, for a wait of `seconds`. */
  refusal(seconds: number): HarkError {
    return rateRefusal(this.what, seconds)
  }

  /** How many keys are remembered (for tests). */
  get size(): number {
    return this.buckets.size
  }

  /** Brings `key`'s bucket up to now and returns its tokens. */
  private refill(key: string): number {
    const now = this.now()
    // Every so often, not only when someone is refused: a client that never repeats its key
    // (a new address each time) must not grow the map without end.
    if (++this.calls % 1024 === 0) this.sweep(now)
    const b = this.buckets.get(key) ?? { tokens: this.count, at: now }
    b.tokens = Math.min(this.count, b.tokens + ((now - b.at) * this.count) / this.windowMs)
    b.at = now
    this.buckets.set(key, b)
    return b.tokens
  }

  /** Forgets buckets that have refilled, so idle keys cost nothing. */
  private sweep(now: number): void {
    for (const [k, b] of this.buckets) if (now - b.at >= this.windowMs) this.buckets.delete(k)
  }
}

/**
 * Whole seconds (at least 1) until a bucket holding `tokens` (< 1) of `count` per `windowMs` has
 * one again. Shared with the Postgres limiter (src/access/shared-limit.ts), so both answer the
 * same Retry-After for the same bucket.
 */
export function secondsToWait(tokens: number, count: number, windowMs: number): number {
  return Math.max(1, Math.ceil(((1 - tokens) * windowMs) / count / 1000))
}

/** A limiter's 429: `what` limited, and Retry-After `seconds`. */
export function rateRefusal(what: string, seconds: number): HarkError {
  return new HarkError(429, `${what}; retry in ${seconds} s`, undefined, {
    'Retry-After': String(seconds),
  })
}
