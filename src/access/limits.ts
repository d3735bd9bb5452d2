import { RateLimiter } from '../core/rate-limit.ts'
import type { Config } from '../server/config.ts'
import { EmailLimits } from './email/limits.ts'
import { PairingCodeGuard } from './enrol/pairing-limits.ts'
import { PASSKEY_LIMITS } from './passkeys/ceremony.ts'

const MINUTE = 60_000

/**
 * Every rate limit of the server, made once with its context (never inside a route factory, so
 * two apps on one context share them, and tests can reach them). docs/security.md lists them all.
 */
export function createLimits(config: Pick<Config, 'writeLimit'>, now: () => number) {
  return {
    /** Agent writes per channel and person writes per person (`--write-limit`, 0 = off). */
    writes: new RateLimiter(config.writeLimit, MINUTE, now, 'write rate limit reached'),
    /** `hark init` starts per client address: a few a minute is plenty for a person. */
    pairStarts: new RateLimiter(10, MINUTE, now, 'write rate limit reached'),
    /** Join-link redemptions per client address: bounds guessing (the codes are 190 bits). */
    joinRedeems: new RateLimiter(20, MINUTE, now, 'write rate limit reached'),
    /** Anonymous passkey ceremonies started per client address. */
    passkeyStarts: new RateLimiter(
      PASSKEY_LIMITS.startsPerIp,
      PASSKEY_LIMITS.windowMs,
      now,
      'too many passkey logins or sign-ups started from your network address',
    ),
    /** Unknown pairing codes tried, per person and per client address. */
    pairingCodes: new PairingCodeGuard(now),
    /** Email codes asked for and tried. */
    email: new EmailLimits(now),
  }
}

export type Limits = ReturnType<typeof createLimits>
