import type { Ctx } from '../server/context.ts'
import { expireDue } from './service.ts'

/** setTimeout's longest delay; later expiries re-arm when it fires. */
const MAX_DELAY = 2 ** 31 - 1

/**
 * Expires questions on time with one timer, armed for the earliest open expiry. At start it
 * first expires everything that fell due while the server was down.
 */
export class ExpiryScheduler {
  private timer: ReturnType<typeof setTimeout> | undefined
  private armedFor: number | undefined

  start(ctx: Ctx): void {
    this.run(ctx)
  }

  /** A question with this expiry was just created; re-arm if it is the earliest. */
  noteExpiry(ctx: Ctx, at: number): void {
    if (this.armedFor === undefined || at < this.armedFor) this.arm(ctx)
  }

  stop(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.armedFor = undefined
  }

  private run(ctx: Ctx): void {
    try {
      expireDue(ctx)
    } catch (error) {
      ctx.log.error(`expiring questions failed: ${error}`)
    }
    this.arm(ctx)
  }

  private arm(ctx: Ctx): void {
    this.stop()
    const next = ctx.store.messages.firstExpiry()
    if (next === undefined) return
    this.armedFor = next
    const delay = Math.min(Math.max(next - ctx.clock.now(), 0), MAX_DELAY)
    this.timer = setTimeout(() => this.run(ctx), delay)
  }
}
