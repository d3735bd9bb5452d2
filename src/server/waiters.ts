/**
 * The long-poll registry. A request that has nothing to return parks a waiter under a key
 * (`channel:<id>` for a change feed, `ask:<id>` for one question); a change wakes every waiter
 * under its key at once. Nothing polls: an idle waiter is one timer and one closure.
 *
 * Every waiter settles exactly once — on a wake, on its timeout, on client abort, or on
 * shutdown — and removes itself, so a disconnected client leaves nothing behind.
 */
export type WaitOutcome = 'woken' | 'timeout' | 'aborted' | 'closed'

interface Waiter {
  settle(outcome: WaitOutcome): void
}

export class Waiters {
  private readonly byKey = new Map<string, Set<Waiter>>()
  private closed = false

  wait(key: string, ms: number, signal?: AbortSignal): Promise<WaitOutcome> {
    if (this.closed) return Promise.resolve('closed')
    if (signal?.aborted) return Promise.resolve('aborted')
    if (ms <= 0) return Promise.resolve('timeout')
    return new Promise<WaitOutcome>((resolve) => {
      const waiters = this.byKey.get(key) ?? new Set<Waiter>()
      this.byKey.set(key, waiters)
      const onAbort = () => waiter.settle('aborted')
      const timer = setTimeout(() => waiter.settle('timeout'), ms)
      const waiter: Waiter = {
        settle: (outcome) => {
          clearTimeout(timer)
          signal?.removeEventListener('abort', onAbort)
          waiters.delete(waiter)
          if (waiters.size === 0 && this.byKey.get(key) === waiters) this.byKey.delete(key)
          resolve(outcome)
        },
      }
      waiters.add(waiter)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }

  /**
   * How many times `wake` was called. Every change to a message wakes its channel, so an
   * unchanged count means nothing changed in between (for sharing one read among the polls
   * a change wakes together).
   */
  wakes = 0

  /** Wakes every waiter under each key. */
  wake(...keys: string[]): void {
    this.wakes++
    for (const key of keys) {
      const set = this.byKey.get(key)
      if (!set) continue
      this.byKey.delete(key)
      for (const waiter of [...set]) waiter.settle('woken')
    }
  }

  /** Settles every waiter (shutdown) and refuses new ones. */
  close(): void {
    this.closed = true
    for (const set of [...this.byKey.values()]) for (const w of [...set]) w.settle('closed')
    this.byKey.clear()
  }

  /** True once `close()` ran: a settled poll must not expect the database to be open. */
  get isClosed(): boolean {
    return this.closed
  }

  /** How many requests are parked right now. */
  get size(): number {
    let n = 0
    for (const set of this.byKey.values()) n += set.size
    return n
  }
}

export const channelKey = (channelId: string) => `channel:${channelId}`
export const askKey = (messageId: string) => `ask:${messageId}`
/** Everything of one person: any change to a message of theirs, or to their channels. */
export const userKey = (userId: string) => `user:${userId}`

/**
 * Runs `read` until it returns something or `waitMs` has passed, parking on `key` in between.
 * A wake that turns out to be irrelevant (another sender's message, say) parks again for the
 * time that is left, so the caller's deadline holds.
 */
export async function pollFor<T>(
  waiters: Waiters,
  key: string,
  waitMs: number,
  signal: AbortSignal | undefined,
  read: () => T | undefined,
): Promise<T | undefined> {
  const deadline = performance.now() + waitMs
  for (;;) {
    const result = read()
    if (result !== undefined) return result
    const outcome = await waiters.wait(key, deadline - performance.now(), signal)
    if (outcome !== 'woken') return undefined
  }
}
