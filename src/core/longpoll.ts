import type { Server } from 'bun'
import type { HeldPolls, PollSignal } from './holds.ts'
import { socketRequest } from './http/front-door.ts'
import type { Abortable } from './waiters.ts'

/** What a long-poll needs of the server: its socket timers, and the count of held polls. */
export interface PollHost {
  /** The listening server (absent when tests drive `app.handle()`). */
  server?: Pick<Server<unknown>, 'timeout'>
  holds: HeldPolls
}

/**
 * Runs a long-poll's `poll`: counted against `holder`'s bound of polls held at once (at the
 * bound its oldest is answered early; see `HeldPolls`), kept open past Bun's idle timeout. The
 * signal handed to `poll` aborts when the client leaves or the poll is the oldest of too many;
 * either way the poll answers as if its wait had run out. A poll that does not wait is neither
 * counted nor extended.
 */
export async function longPoll<T>(
  host: PollHost,
  request: Request,
  holder: string,
  waitMs: number,
  poll: (signal: Abortable) => Promise<T>,
): Promise<T> {
  const held = holdPoll(host, request, holder, waitMs)
  if (!held) return poll(request.signal)
  try {
    return await poll(held)
  } finally {
    held.release()
  }
}

/**
 * `longPoll` without the callback, for the hottest path (the agent feed, held by the
 * thousand): the poll's signal, counted and kept open, or undefined when it does not wait. The
 * caller releases it once answered.
 */
export function holdPoll(
  host: PollHost,
  request: Request,
  holder: string,
  waitMs: number,
): PollSignal | undefined {
  if (waitMs <= 0) return undefined
  const held = host.holds.take(holder, request.signal)
  holdOpen(host, request, waitMs)
  return held
}

/**
 * Keeps a long-poll's connection open past Bun's idle timeout: the socket is idle while the
 * request waits, and Bun would otherwise cut it after `idleTimeout` seconds.
 */
export function holdOpen(host: Pick<PollHost, 'server'>, request: Request, waitMs: number): void {
  if (waitMs > 0) host.server?.timeout(socketRequest(request), Math.ceil(waitMs / 1000) + 15)
}

/**
 * Turns Bun's idle timeout off for a request whose body streams in (an upload): Bun would cut it
 * after `idleTimeout` however steadily bytes arrive; `stallGuarded` watches for stalls instead.
 */
export function streamOpen(host: Pick<PollHost, 'server'>, request: Request): void {
  host.server?.timeout(socketRequest(request), 0)
}
