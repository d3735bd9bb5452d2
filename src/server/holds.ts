import { HarkError } from './errors.ts'

/** Long-polls one token (or one browser session) may hold at once. */
export const MAX_HELD_POLLS = 20

/** Seconds a refused long-poll is told to wait before trying again. */
const RETRY_AFTER_S = 5

/**
 * Counts the long-polls each holder (a token, a session) holds right now. A held poll costs a
 * connection and a waiter for up to 55 s; without a cap, one token could hold thousands. In
 * memory: it counts live requests, which a restart ends anyway.
 */
export class HeldPolls {
  private readonly held = new Map<string, number>()

  constructor(private readonly max = MAX_HELD_POLLS) {}

  /** Counts one more poll for `holder`, or refuses with 429; returns the release (call once). */
  take(holder: string): () => void {
    const count = this.held.get(holder) ?? 0
    if (count >= this.max) {
      throw new HarkError(
        429,
        `too many long-polls held at once for this token or session (at most ${this.max}); let one finish or cancel it`,
        undefined,
        { 'Retry-After': String(RETRY_AFTER_S) },
      )
    }
    this.held.set(holder, count + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      const left = (this.held.get(holder) ?? 1) - 1
      if (left <= 0) this.held.delete(holder)
      else this.held.set(holder, left)
    }
  }

  /** Polls held by `holder` now (for tests and metrics). */
  count(holder: string): number {
    return this.held.get(holder) ?? 0
  }
}

/** Who holds a poll: the token behind the request, else the browser session. */
export function holderOf(auth: { token?: { id: string }; session?: { id: string } }): string {
  if (auth.token) return `token:${auth.token.id}`
  if (auth.session) return `session:${auth.session.id}`
  return 'anonymous'
}
