import type { Abortable } from './waiters.ts'

/** Long-polls one token (or one browser session) may hold at once, by default (`--max-held-polls`). */
export const MAX_HELD_POLLS = 20

/**
 * The signal a held poll waits with: it aborts when the client leaves (the request's signal)
 * or when the poll is the oldest of too many (`evict`). One small object per held poll, with no
 * AbortController or composite signal of its own: 10,000 held polls must stay cheap.
 */
export class PollSignal implements Abortable {
  private evicted = false
  private listener: EventListenerOrEventListenerObject | undefined

  constructor(
    private readonly request: AbortSignal,
    private readonly owner: HeldPolls,
    private readonly holder: string,
  ) {}

  /** Forgets this poll in its holder's count; call once the poll has answered. */
  release(): void {
    this.owner.forget(this.holder, this)
  }

  get aborted(): boolean {
    return this.evicted || this.request.aborted
  }

  addEventListener(type: 'abort', listener: EventListenerOrEventListenerObject): void {
    this.listener = listener
    // No `{ once: true }`: the options dictionary costs more than the registration itself
    // (bench/README.md), and the waiter removes its listener as it settles anyway.
    this.request.addEventListener(type, listener)
  }

  removeEventListener(type: 'abort', listener: EventListenerOrEventListenerObject): void {
    if (this.listener === listener) this.listener = undefined
    this.request.removeEventListener(type, listener)
  }

  /** Ends the poll now, as if its wait had run out. */
  evict(): void {
    if (this.evicted) return
    this.evicted = true
    const listener = this.listener
    this.listener = undefined
    if (!listener) return
    this.request.removeEventListener('abort', listener)
    const event = new Event('abort')
    if (typeof listener === 'function') listener(event)
    else listener.handleEvent(event)
  }
}

/**
 * Counts the long-polls each holder (a token, a session) holds right now. A held poll costs a
 * connection and a waiter for up to 55 s; without a bound, one token could hold thousands. At
 * the bound the holder's oldest poll is answered at once, as if its wait had run out, and the
 * new one is held: the count stays bounded, and a person who reloads the app or opens it in
 * several tabs (whose earlier polls linger until their wait ends) is never refused. In memory:
 * it counts live requests, which a restart ends anyway.
 */
export class HeldPolls {
  /** Per holder, its polls oldest first (a Set keeps insertion order). */
  private readonly held = new Map<string, Set<PollSignal>>()

  /**
   * `max` 0: no bound (`--max-held-polls 0`, for a benchmark that holds thousands on one
   * token). `atBound` hears of each poll ended early, so the log can say why.
   */
  constructor(
    private readonly max = MAX_HELD_POLLS,
    private readonly atBound: (holder: string) => void = () => {},
  ) {}

  /** Counts one more poll for `holder`, ending its oldest when at the bound. */
  take(holder: string, request: AbortSignal): PollSignal {
    let polls = this.held.get(holder)
    if (!polls) {
      polls = new Set()
      this.held.set(holder, polls)
    }
    if (this.max > 0 && polls.size >= this.max) {
      const oldest = polls.values().next().value as PollSignal
      polls.delete(oldest)
      oldest.evict()
      this.atBound(holder)
    }
    const poll = new PollSignal(request, this, holder)
    polls.add(poll)
    return poll
  }

  /** Drops `poll` from `holder`'s count (once it answered; evicted ones are gone already). */
  forget(holder: string, poll: PollSignal): void {
    const polls = this.held.get(holder)
    if (!polls?.delete(poll)) return
    if (polls.size === 0) this.held.delete(holder)
  }

  /** Polls held by `holder` now (for tests and metrics). */
  count(holder: string): number {
    return this.held.get(holder)?.size ?? 0
  }
}

/** Who holds a poll: the token behind the request, else the browser session. */
export function holderOf(auth: { token?: { id: string }; session?: { id: string } }): string {
  if (auth.token) return `token:${auth.token.id}`
  if (auth.session) return `session:${auth.session.id}`
  return 'anonymous'
}
