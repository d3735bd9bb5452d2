import type { Ctx } from '../../core/context.ts'
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
  /** Counts arms begun: an arm whose read was overtaken by a later one (or a stop) drops out. */
  private arming = 0

  /** Another instance's questions, when instances share the records: looked for this often. */
  recheckEveryMs = 30_000
  private recheck: ReturnType<typeof setInterval> | undefined

  async start(ctx: Ctx): Promise<void> {
    await this.run(ctx)
    // A question asked through another instance arms that instance's timer, not this one's:
    // should that instance stop, its questions still expire on time (within this period) here.
    // Every instance may expire the same question; its store changes only an open one, so
    // exactly one settles it (asks/service.ts).
    if (ctx.database.shared) {
      this.recheck = setInterval(() => void this.rearm(ctx), this.recheckEveryMs)
      this.recheck.unref?.()
    }
  }

  /** A question with this expiry was just created; re-arm if it is the earliest. */
  noteExpiry(ctx: Ctx, at: number): void {
    if (this.armedFor === undefined || at < this.armedFor) void this.rearm(ctx)
  }

  stop(): void {
    this.arming++
    clearInterval(this.recheck)
    this.disarm()
  }

  private disarm(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.armedFor = undefined
  }

  private async run(ctx: Ctx): Promise<void> {
    try {
      await expireDue(ctx)
    } catch (error) {
      ctx.log.error(`expiring questions failed: ${error}`)
    }
    await this.rearm(ctx)
  }

  private rearm(ctx: Ctx): Promise<void> {
    return this.arm(ctx).catch((error) => ctx.log.error(`arming question expiry failed: ${error}`))
  }

  private async arm(ctx: Ctx): Promise<void> {
    const turn = ++this.arming
    const next = await ctx.store.messages.firstExpiry()
    if (turn !== this.arming) return
    this.disarm()
    if (next === undefined) return
    this.armedFor = next
    const delay = Math.min(Math.max(next - ctx.clock.now(), 0), MAX_DELAY)
    this.timer = setTimeout(() => void this.run(ctx), delay)
  }
}

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../../core/context.ts' {
  interface Ctx {
    expiry: ExpiryScheduler
  }
}
