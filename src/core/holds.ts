/** Long-polls one token (or one browser session) may hold at once. */
export const MAX_HELD_POLLS = 20

/** One held poll: it ends early when its `signal` aborts (it was the oldest of too many). */
export interface Hold {
  signal: AbortSignal
  /** Call once the poll has answered. */
  release(): void
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
  private readonly held = new Map<string, Set<AbortController>>()

  constructor(private readonly max = MAX_HELD_POLLS) {}

  take(holder: string): Hold {
    let polls = this.held.get(holder)
    if (!polls) {
      polls = new Set()
      this.held.set(holder, polls)
    }
    if (polls.size >= this.max) {
      const oldest = polls.values().next().value as AbortController
      polls.delete(oldest)
      oldest.abort()
    }
    const poll = new AbortController()
    polls.add(poll)
    return {
      signal: poll.signal,
      release: () => {
        const now = this.held.get(holder)
        if (!now?.delete(poll)) return
        if (now.size === 0) this.held.delete(holder)
      },
    }
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
