/**
 * Per-channel write limit: `perMinute` writes, refilled continuously (a token bucket with a
 * burst of one minute's worth). In memory on purpose: it guards the server, not the data, and
 * a restart forgetting it is harmless.
 */
export class WriteLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>()
  private takes = 0

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number,
  ) {}

  /** Takes one write for `key`; returns 0 when allowed, else the seconds to wait. */
  take(key: string): number {
    if (this.perMinute <= 0) return 0
    const now = this.now()
    // Every so often, not only when someone is refused: a client that never repeats its key
    // (a new address each time) must not grow the map without end.
    if (++this.takes % 1024 === 0) this.sweep(now)
    const ratePerMs = this.perMinute / 60_000
    const b = this.buckets.get(key) ?? { tokens: this.perMinute, at: now }
    b.tokens = Math.min(this.perMinute, b.tokens + (now - b.at) * ratePerMs)
    b.at = now
    this.buckets.set(key, b)
    if (b.tokens >= 1) {
      b.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / ratePerMs / 1000))
  }

  /** Forgets buckets that have refilled, so idle channels cost nothing. */
  private sweep(now: number): void {
    const full = 60_000
    for (const [k, b] of this.buckets) if (now - b.at > full) this.buckets.delete(k)
  }

  /** How many keys are remembered (for tests). */
  get size(): number {
    return this.buckets.size
  }
}
