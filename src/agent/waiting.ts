import { MAX_WAIT_SECONDS } from '../core/query.ts'
import { HarkError } from './client.ts'
import { isNetworkError, networkErrorCode, pause } from './retry.ts'
import { isRequestTimeout } from './timeouts.ts'

/**
 * Long waits, built from the server's long-polls (each held at most 55 s): poll again and again
 * until something happens or the caller's deadline passes. An outage (the server restarting, a
 * dropped connection, a proxy's 5xx) does not end a wait; it keeps polling until the deadline.
 */
export interface PollOptions {
  /** Epoch milliseconds; `Infinity` waits for ever. */
  deadline: number
  /** Told once when the server is lost and once when it is back. */
  onOutage?: (line: string) => void
  /** Ends the wait early (its reason is thrown): a caller that no longer wants the answer. */
  signal?: AbortSignal
}

/** Room over the requested wait before a silent connection counts as dead. */
const STALL_MS = 20_000
const DEADLINE_GRACE_MS = 1000
const OUTAGE_PAUSE_MS = [500, 1000, 2000, 5000]

const isOutage = (error: unknown) =>
  isNetworkError(error) || (error instanceof HarkError && error.kind === 'http' && error.status >= 500)

/**
 * Calls `poll(waitSeconds, signal)` until it returns a value (the result) or the deadline passes
 * (undefined). The wait never reaches past the deadline.
 */
export async function pollUntil<T>(
  poll: (waitSeconds: number, signal: AbortSignal) => Promise<T | undefined>,
  options: PollOptions,
): Promise<T | undefined> {
  let outages = 0
  for (;;) {
    options.signal?.throwIfAborted()
    const remainingMs = options.deadline - Date.now()
    const waitSeconds = Math.max(0, Math.min(MAX_WAIT_SECONDS, remainingMs / 1000))
    // A request (retries included) never outlives the deadline by more than a second.
    const limitMs = Math.min(waitSeconds * 1000 + STALL_MS, remainingMs + DEADLINE_GRACE_MS)
    const bound = AbortSignal.timeout(limitMs)
    const signal = options.signal ? AbortSignal.any([bound, options.signal]) : bound
    try {
      const value = await poll(Math.round(waitSeconds * 1000) / 1000, signal)
      if (outages > 0) options.onOutage?.('connected to the server again')
      outages = 0
      if (value !== undefined) return value
    } catch (error) {
      options.signal?.throwIfAborted()
      // Our own bound (`limitMs`) or the client's (a `timeout` HarkError): a silent server.
      const stalled =
        isRequestTimeout(error) ||
        (error instanceof Error && error.name === 'TimeoutError')
      if (!stalled && !isOutage(error)) throw error
      if (Date.now() >= options.deadline) return undefined
      if (outages === 0) {
        const why = stalled ? 'the server stopped answering' : describeOutage(error)
        options.onOutage?.(`${why}; still waiting, polling again until the timeout`)
      }
      const pauseMs = OUTAGE_PAUSE_MS[Math.min(outages, OUTAGE_PAUSE_MS.length - 1)] as number
      outages++
      const left = options.deadline - Date.now()
      if (left <= 0) return undefined
      await pause(Math.min(pauseMs, left))
      continue
    }
    if (Date.now() >= options.deadline) return undefined
  }
}

const describeOutage = (error: unknown) =>
  error instanceof HarkError && error.kind === 'http'
    ? `the server answered ${error.status}`
    : `lost the server (${networkErrorCode(error)})`

/** How long a wait may last, and whom to tell about outages meanwhile. */
export interface WaitOptions {
  /** Undefined waits without limit. */
  timeoutMs?: number
  /** Told when the server is lost during the wait, and when it is back. */
  onOutage?: (line: string) => void
  /** Ends the wait early: the caller was cancelled. */
  signal?: AbortSignal
}

export const deadlineAfter = (timeoutMs: number | undefined) =>
  timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeoutMs
