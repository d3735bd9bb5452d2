import { HarkError } from '../core/errors.ts'
import { RateLimiter } from '../core/rate-limit.ts'

/**
 * Misses allowed per 10 minutes when looking up, approving or denying a pairing by its user code:
 * per person, and per client address (so that many accounts behind one address do not add up).
 *
 * A user code is 8 letters of 20: 20^8 ≈ 2.6 × 10^10 codes, and a hit approves a stranger's
 * `hark init` into the guesser's account, so guessing must stay hopeless (RFC 8628 §5.1). With 10
 * misses per 10 minutes, refilled one a minute, a person gets at most ~1,450 guesses a day; with
 * P pairings pending at once (each lives 10 minutes) the chance of any hit in a day is at most
 * 1,450 × P / 2.6 × 10^10 ≈ 6 × 10^-8 × P. Hits are free: a person typing the code their
 * terminal shows is never held up, and 10 typos in 10 minutes is far beyond a person's.
 */
export const PAIRING_LIMITS = {
  missesPerPerson: 10,
  missesPerIp: 20,
  windowMs: 10 * 60_000,
} as const

/**
 * Counts the misses of pairing-code lookups. Both limits are checked before the lookup (a client
 * over either gets 429 whatever code it sends: answering hits would keep the guessing going) and
 * a miss (404: unknown, expired or no longer pending) is counted against both after it.
 */
export class PairingCodeGuard {
  private readonly byPerson: RateLimiter
  private readonly byIp: RateLimiter

  constructor(now: () => number) {
    const { missesPerPerson, missesPerIp, windowMs } = PAIRING_LIMITS
    this.byPerson = new RateLimiter(
      missesPerPerson,
      windowMs,
      now,
      'too many unknown pairing codes tried',
    )
    this.byIp = new RateLimiter(
      missesPerIp,
      windowMs,
      now,
      'too many unknown pairing codes tried from your network address',
    )
  }

  /** Runs a lookup by code for `personId` from `ip`; its 404 counts as a miss. */
  async attempt<T>(personId: string, ip: string, lookUp: () => Promise<T>): Promise<T> {
    this.byPerson.check(personId)
    this.byIp.check(ip)
    try {
      return await lookUp()
    } catch (error) {
      if (error instanceof HarkError && error.status === 404) {
        this.byPerson.spend(personId)
        this.byIp.spend(ip)
      }
      throw error
    }
  }
}
