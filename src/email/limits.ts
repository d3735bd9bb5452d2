import type { Ctx } from '../server/context.ts'
import { HarkError } from '../server/errors.ts'
import { WriteLimiter } from '../server/ratelimit.ts'

const WINDOW_MS = 15 * 60 * 1000

/** Per 15 minutes: codes asked for one address, codes asked from one IP, codes tried from one IP. */
export const EMAIL_LIMITS = { startsPerAddress: 5, startsPerIp: 20, verifiesPerIp: 30 } as const

/**
 * `count` per `windowMs`, refilled continuously, as the shared token bucket (built for "per
 * minute") running on a clock slowed down by windowMs / 1 minute. Its wait, in slowed seconds,
 * is scaled back to real ones.
 */
class WindowLimiter {
  private readonly bucket: WriteLimiter
  private readonly scale: number

  constructor(
    count: number,
    windowMs: number,
    now: () => number,
    /** Says what was limited, in the 429's error. */
    private readonly what: string,
  ) {
    this.scale = windowMs / 60_000
    this.bucket = new WriteLimiter(count, () => now() / this.scale)
  }

  /** Takes one for `key`; throws 429 with Retry-After when none is left. */
  take(key: string): void {
    const wait = this.bucket.take(key)
    if (wait <= 0) return
    const seconds = Math.ceil(wait * this.scale)
    throw new HarkError(429, `${this.what}; retry in ${seconds} s`, undefined, {
      'Retry-After': String(seconds),
    })
  }
}

export interface EmailLimiters {
  startsPerAddress: WindowLimiter
  startsPerIp: WindowLimiter
  verifiesPerIp: WindowLimiter
}

/** One set per context, in memory like the write limit: it guards the server, not the data. */
const limiters = new WeakMap<Ctx, EmailLimiters>()

export function emailLimiters(ctx: Ctx): EmailLimiters {
  let found = limiters.get(ctx)
  if (!found) {
    const now = () => ctx.clock.now()
    found = {
      startsPerAddress: new WindowLimiter(
        EMAIL_LIMITS.startsPerAddress,
        WINDOW_MS,
        now,
        'too many codes asked for this email address',
      ),
      startsPerIp: new WindowLimiter(
        EMAIL_LIMITS.startsPerIp,
        WINDOW_MS,
        now,
        'too many codes asked from your network address',
      ),
      verifiesPerIp: new WindowLimiter(
        EMAIL_LIMITS.verifiesPerIp,
        WINDOW_MS,
        now,
        'too many codes tried from your network address',
      ),
    }
    limiters.set(ctx, found)
  }
  return found
}
