import { RateLimiter } from '../core/rate-limit.ts'

const QUARTER_HOUR = 15 * 60 * 1000
const HOUR = 60 * 60 * 1000

/**
 * The email-code limits. Anyone may ask for a code for any address, so none of them may let a
 * stranger stop the address's owner from logging in:
 * - `startsPerIp` (per 15 minutes, 429): codes asked from one client address, any email address.
 * - `startsPerAddressFromIp` (per 15 minutes, 429): codes asked for one email address from one
 *   client address. Counted per pair, so a stranger asking from elsewhere never holds up the
 *   person's own requests.
 * - `codesPerAddress` (per hour, all sources, any purpose): codes made for one email address.
 *   Past it no code is made and nothing is mailed, but the answer is the same and the codes
 *   already mailed stay good: a cap on mail-bombing that voids nothing and tells nothing. One
 *   client address at its own limit (5 at once, then one per 3 minutes) never empties it.
 * - `verifiesPerIp` (per 15 minutes, 429): codes tried from one client address, any email address.
 */
export const EMAIL_LIMITS = {
  startsPerIp: 20,
  startsPerAddressFromIp: 5,
  codesPerAddress: 20,
  verifiesPerIp: 30,
} as const

/** The limiters of one server, made once with its context; in memory: they guard the server. */
export class EmailLimits {
  readonly startsPerIp: RateLimiter
  readonly startsPerAddressFromIp: RateLimiter
  readonly codesPerAddress: RateLimiter
  readonly verifiesPerIp: RateLimiter

  constructor(now: () => number) {
    const limiter = (count: number, windowMs: number, what: string) =>
      new RateLimiter(count, windowMs, now, what)
    const { startsPerIp, startsPerAddressFromIp, codesPerAddress, verifiesPerIp } = EMAIL_LIMITS
    this.startsPerIp = limiter(
      startsPerIp,
      QUARTER_HOUR,
      'too many codes asked from your network address',
    )
    this.startsPerAddressFromIp = limiter(
      startsPerAddressFromIp,
      QUARTER_HOUR,
      'too many codes asked for this email address from your network address',
    )
    this.codesPerAddress = limiter(
      codesPerAddress,
      HOUR,
      'too many codes asked for this email address',
    )
    this.verifiesPerIp = limiter(
      verifiesPerIp,
      QUARTER_HOUR,
      'too many codes tried from your network address',
    )
  }
}
