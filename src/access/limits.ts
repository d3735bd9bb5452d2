import type { SQL } from 'bun'
import type { Config } from '../core/config.ts'
import { RateLimiter } from '../core/rate-limit.ts'
import { EmailLimits } from './email-limits.ts'
import { PairingCodeGuard } from './pairing-limits.ts'
import { PASSKEY_LIMITS } from './passkeys/ceremony.ts'
import { SharedRateLimiter } from './shared-limit.ts'

const MINUTE = 60_000

/**
 * The write limit as the guards take it: in memory (`RateLimiter`, synchronous) or in Postgres
 * (`SharedRateLimiter`, a promise). Either throws (or rejects with) the 429. The guards await only
 * a promise, so the in-memory take costs what it always did.
 */
export interface WriteLimit {
  take(key: string): void | Promise<void>
}

/**
 * Every rate limit of the server, made once with its context (never inside a route factory, so
 * two apps on one context share them, and tests can reach them). docs/security.md lists them all.
 *
 * With `shared` (the Postgres pool of a server that may run as several instances), the write
 * limit is kept in the database (`rate_buckets`), so it holds across instances: it bounds what
 * is written, however the writes are spread. The other limits stay in each instance's memory
 * on purpose: they guard the server (its CPU, its mail, guessing against it), not the data.
 */
export function createLimits(config: Pick<Config, 'writeLimit'>, now: () => number, shared?: SQL) {
  const what = 'write rate limit reached'
  /** Agent writes per channel and person writes per person (`--write-limit`, 0 = off). */
  const writes: WriteLimit = shared
    ? new SharedRateLimiter(shared, config.writeLimit, MINUTE, now, what)
    : new RateLimiter(config.writeLimit, MINUTE, now, what)
  return {
    writes,
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
    /** "Send a test notification" per person: each posts to every device's push service. */
    pushTests: new RateLimiter(5, MINUTE, now, 'too many test notifications; wait a minute'),
    /** Unknown pairing codes tried, per person and per client address. */
    pairingCodes: new PairingCodeGuard(now),
    /** Email codes asked for and tried. */
    email: new EmailLimits(now),
  }
}

export type Limits = ReturnType<typeof createLimits>

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../core/context.ts' {
  interface Ctx {
    /** Every rate limit (docs/security.md). */
    limits: Limits
  }
}
