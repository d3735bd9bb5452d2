/**
 * The long-poll registry. A request that has nothing to return parks a waiter under a key
 * (`channel:<id>` for a change feed, `ask:<id>` for one question); a change wakes every waiter
 * under its key at once. Nothing polls: an idle waiter is one small object in a set and in a
 * deadline heap. One timer, armed for the earliest deadline, serves every waiter (a timer per
 * waiter cost ~10,000 timers and closures for 10,000 held polls), and the waiter itself is the
 * abort listener (`handleEvent`), so it needs no closure of its own.
 *
 * Every waiter settles exactly once — on a wake, on its timeout, on client abort, or on
 * shutdown — and removes itself, so a disconnected client leaves nothing behind.
 */
export type WaitOutcome = 'woken' | 'timeout' | 'aborted' | 'closed'

/**
 * What ends a wait early: a request's `AbortSignal` (the client left), or a held poll's
 * `PollSignal` (core/holds.ts), which also ends when it is the oldest of too many.
 */
export type Abortable = Pick<AbortSignal, 'aborted' | 'addEventListener' | 'removeEventListener'>

/**
 * A parked waiter, and the `Parked` its caller holds: one object with its promise's resolver
 * (`Promise.withResolvers`: no executor closure), its own abort listener and its own `cancel`,
 * so parking costs no closure and no wrapper object (10,000 held polls pay for each).
 */
class Waiter implements Parked {
  /** Position in the deadline heap; -1 once settled. */
  index = -1
  readonly outcome: Promise<WaitOutcome>
  readonly resolve: (outcome: WaitOutcome) => void
  constructor(
    readonly owner: Waiters,
    readonly key: string,
    readonly set: Set<Waiter>,
    readonly deadline: number,
    readonly signal: Abortable | undefined,
  ) {
    const { promise, resolve } = Promise.withResolvers<WaitOutcome>()
    this.outcome = promise
    this.resolve = resolve
  }

  /** The client went away (an `EventListener` object: no closure per waiter). */
  handleEvent(): void {
    this.owner.settle(this, 'aborted')
  }

  cancel(): void {
    this.owner.settle(this, 'aborted')
  }
}

/** A parked waiter: its outcome, and letting it go (it then settles as aborted, unawaited). */
export interface Parked {
  outcome: Promise<WaitOutcome>
  cancel(): void
}

/** A wait that ended before it began (shut down, aborted, no time): nothing to let go. */
const settledAs = (outcome: WaitOutcome): Parked => ({
  outcome: Promise.resolve(outcome),
  cancel() {},
})

export class Waiters {
  private readonly byKey = new Map<string, Set<Waiter>>()
  /** Every parked waiter, a binary min-heap on `deadline`. */
  private readonly heap: Waiter[] = []
  private timer: ReturnType<typeof setTimeout> | undefined
  /** The deadline the timer is armed for. */
  private armedFor = Number.POSITIVE_INFINITY
  private closed = false

  wait(key: string, ms: number, signal?: Abortable): Promise<WaitOutcome> {
    return this.park(key, ms, signal).outcome
  }

  /**
   * Parks a waiter on `key` now (synchronously) and answers its outcome and a way to let it go.
   * A long-poll parks in the same turn as a read that found nothing, or before its read when a
   * wake raced the last one (`pollFor`), so a wake that lands while an async read is under way
   * is not lost (docs/scaling.md, "Wake-ups across instances").
   */
  park(key: string, ms: number, signal?: Abortable): Parked {
    if (this.closed) return settledAs('closed')
    if (signal?.aborted) return settledAs('aborted')
    if (ms <= 0) return settledAs('timeout')
    let set = this.byKey.get(key)
    if (!set) {
      set = new Set<Waiter>()
      this.byKey.set(key, set)
    }
    const waiter = new Waiter(this, key, set, performance.now() + ms, signal)
    set.add(waiter)
    this.push(waiter)
    signal?.addEventListener('abort', waiter, { once: true })
    if (waiter.deadline < this.armedFor) this.arm(waiter.deadline)
    return waiter
  }

  /** Settles one waiter (once) and forgets it everywhere. */
  settle(waiter: Waiter, outcome: WaitOutcome): void {
    if (waiter.index === -1) return
    this.remove(waiter)
    if (this.heap.length === 0) this.disarm()
    waiter.signal?.removeEventListener('abort', waiter)
    waiter.set.delete(waiter)
    if (waiter.set.size === 0 && this.byKey.get(waiter.key) === waiter.set) {
      this.byKey.delete(waiter.key)
    }
    waiter.resolve(outcome)
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
      for (const waiter of [...set]) this.settle(waiter, 'woken')
    }
  }

  /**
   * Wakes every waiter, whatever its key: for when wake-ups may have been lost (another
   * instance's notifications missed while its listener was away), so every poll re-reads.
   */
  wakeAll(): void {
    this.wakes++
    this.settleAll('woken')
  }

  /** Settles every waiter (shutdown) and refuses new ones. */
  close(): void {
    this.closed = true
    this.settleAll('closed')
    this.byKey.clear()
    this.disarm()
  }

  private settleAll(outcome: WaitOutcome): void {
    for (const set of [...this.byKey.values()]) {
      for (const waiter of [...set]) this.settle(waiter, outcome)
    }
  }

  /** True once `close()` ran: a settled poll must not expect the database to be open. */
  get isClosed(): boolean {
    return this.closed
  }

  /** How many requests are parked right now. */
  get size(): number {
    return this.heap.length
  }

  /** Nothing is parked: no timer keeps the process awake. */
  private disarm(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    this.armedFor = Number.POSITIVE_INFINITY
  }

  private arm(deadline: number): void {
    clearTimeout(this.timer)
    this.armedFor = deadline
    this.timer = setTimeout(() => this.expire(), Math.max(0, deadline - performance.now()))
  }

  /** The timer fired: times out every waiter that is due, then re-arms for the next. */
  private expire(): void {
    this.timer = undefined
    this.armedFor = Number.POSITIVE_INFINITY
    const now = performance.now()
    for (;;) {
      const first = this.heap[0]
      if (!first) return
      // A timer may fire a fraction of a millisecond early; never answer before the deadline.
      if (first.deadline > now) {
        this.arm(first.deadline)
        return
      }
      this.settle(first, 'timeout')
    }
  }

  private push(waiter: Waiter): void {
    waiter.index = this.heap.length
    this.heap.push(waiter)
    this.up(waiter.index)
  }

  private remove(waiter: Waiter): void {
    const i = waiter.index
    const last = this.heap.pop() as Waiter
    waiter.index = -1
    if (last === waiter) return
    this.heap[i] = last
    last.index = i
    this.up(i)
    this.down(last.index)
  }

  private up(i: number): void {
    const heap = this.heap
    const item = heap[i] as Waiter
    while (i > 0) {
      const parent = (i - 1) >> 1
      const above = heap[parent] as Waiter
      if (above.deadline <= item.deadline) break
      heap[i] = above
      above.index = i
      i = parent
    }
    heap[i] = item
    item.index = i
  }

  private down(i: number): void {
    const heap = this.heap
    const item = heap[i] as Waiter
    const n = heap.length
    for (;;) {
      let child = 2 * i + 1
      if (child >= n) break
      const right = child + 1
      if (right < n && (heap[right] as Waiter).deadline < (heap[child] as Waiter).deadline) {
        child = right
      }
      const below = heap[child] as Waiter
      if (below.deadline >= item.deadline) break
      heap[i] = below
      below.index = i
      i = child
    }
    heap[i] = item
    item.index = i
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
 *
 * No change may be missed between a read and the park after it. A read that finds something
 * (every poll a change woke, by the thousand) parks nothing: the park comes after a read that
 * found nothing, in the same turn, when no wake happened since the read began (`wakes` counts
 * every wake, local or from another instance). When one did, the next read is parked for
 * before it starts, so a server woken without pause cannot keep a poll re-reading.
 */
export async function pollFor<T>(
  waiters: Waiters,
  key: string,
  waitMs: number,
  signal: Abortable | undefined,
  read: () => Promise<T | undefined> | T | undefined,
): Promise<T | undefined> {
  const deadline = performance.now() + waitMs
  let parkFirst = false
  for (;;) {
    const wakes = waiters.wakes
    let parked = parkFirst ? waiters.park(key, deadline - performance.now(), signal) : undefined
    let result: T | undefined
    try {
      result = await read()
    } catch (error) {
      parked?.cancel()
      throw error
    }
    if (result !== undefined) {
      parked?.cancel()
      return result
    }
    if (!parked) {
      if (waiters.wakes !== wakes) {
        parkFirst = true
        continue
      }
      parked = waiters.park(key, deadline - performance.now(), signal)
    }
    if ((await parked.outcome) !== 'woken') return undefined
    parkFirst = false
  }
}

/**
 * Holds while `current` is pending: until `reread()` shows it settled, the wait ends, or the
 * client leaves. Answers what settled it, if anything, and the last state read either way (on
 * shutdown the database may be closed already, and that is what is left to answer with).
 */
export async function waitWhilePending<T>(
  waiters: Waiters,
  key: string,
  waitMs: number,
  signal: Abortable | undefined,
  current: T,
  reread: () => Promise<T>,
  pending: (state: T) => boolean,
): Promise<{ settled: T | undefined; last: T }> {
  let last = current
  const settled = await pollFor(waiters, key, waitMs, signal, async () => {
    last = await reread()
    return pending(last) ? undefined : last
  })
  return { settled, last }
}
