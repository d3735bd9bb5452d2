import { failureCode, HarkError } from './errors.ts'
import { sleep } from './http.ts'

/**
 * Long waits, built from the server's long-polls (each held at most 55 s): poll again and again
 * until something happens or the caller's deadline passes. An outage (the server restarting, a
 * dropped connection, a proxy's 5xx, a rate limit, a server that stops answering) does not end
 * a wait; it keeps polling until the deadline. The one wait loop of Hark's clients: this SDK's
 * `waitForAnswer` and `messages()`, and the `hark` CLI's `ask`, `wait`, `inbox --wait`, `init`.
 */

/** The longest a server holds a long-poll; a longer wait is several of them. */
export const MAX_WAIT_SECONDS = 55

export interface PollOptions {
  /** Epoch milliseconds; `Infinity` waits for ever. */
  deadline: number
  /**
   * Told once when the server is lost (`lost the server (ECONNREFUSED); still waiting, polling
   * again until the timeout`) and once when it is back (`connected to the server again`).
   */
  onOutage?: (line: string) => void
  /** Ends the wait early (its reason is thrown): a caller that no longer wants the answer. */
  signal?: AbortSignal
}

/** Room over the requested wait before a silent connection counts as dead. */
const STALL_MS = 20_000
const DEADLINE_GRACE_MS = 1000
const OUTAGE_PAUSE_MS = [500, 1000, 2000, 5000]

const isOutage = (error: unknown) =>
  error instanceof HarkError &&
  (error.kind === 'network' || error.status >= 500 || error.status === 429)

/** Our own bound on a poll, or the transport's: a server that stopped answering. */
const isStall = (error: unknown) =>
  (error instanceof HarkError && error.kind === 'timeout') ||
  (error instanceof Error && error.name === 'TimeoutError')

/**
 * Calls `poll(waitSeconds, signal)` until it returns a value (the result) or the deadline passes
 * (undefined). The wait never reaches past the deadline; a poll whose answer has not come
 * `waitSeconds` + 20 s after it began is abandoned as a stall.
 */
export async function pollUntil<T>(
  poll: (waitSeconds: number, signal: AbortSignal) => Promise<T | undefined>,
  options: PollOptions,
): Promise<T | undefined> {
  let outages = 0
  for (;;) {
    if (options.signal?.aborted) throw options.signal.reason
    const remainingMs = options.deadline - Date.now()
    const waitSeconds = Math.max(0, Math.min(MAX_WAIT_SECONDS, remainingMs / 1000))
    // A request (retries included) never outlives the deadline by more than a second.
    const limitMs = Math.min(waitSeconds * 1000 + STALL_MS, remainingMs + DEADLINE_GRACE_MS)
    const bound = either(timeoutSignal(limitMs), options.signal)
    try {
      const value = await poll(Math.round(waitSeconds * 1000) / 1000, bound.signal)
      if (outages > 0) options.onOutage?.('connected to the server again')
      outages = 0
      if (value !== undefined) return value
    } catch (error) {
      if (options.signal?.aborted) throw options.signal.reason
      const stalled = isStall(error)
      if (!stalled && !isOutage(error)) throw error
      if (Date.now() >= options.deadline) return undefined
      if (outages === 0) {
        const why = stalled ? 'the server stopped answering' : describeOutage(error)
        options.onOutage?.(`${why}; still waiting, polling again until the timeout`)
      }
      // A rate limit's Retry-After is the shortest pause: polling sooner is refused again.
      const pauseMs = Math.max(
        OUTAGE_PAUSE_MS[Math.min(outages, OUTAGE_PAUSE_MS.length - 1)] as number,
        error instanceof HarkError ? (error.retryAfterMs ?? 0) : 0,
      )
      outages++
      const left = options.deadline - Date.now()
      if (left <= 0) return undefined
      await sleep(Math.min(pauseMs, left), options.signal)
      continue
    } finally {
      bound.done()
    }
    if (Date.now() >= options.deadline) return undefined
  }
}

const describeOutage = (error: unknown) =>
  error instanceof HarkError && error.kind === 'http'
    ? `the server answered ${error.status}`
    : `lost the server (${failureCode(error instanceof HarkError ? error.cause : error)})`

/** `AbortSignal.timeout`, which Node 18 has; its abort's reason is a `TimeoutError`. */
const timeoutSignal = (ms: number) => AbortSignal.timeout(Math.max(0, ms))

/**
 * A signal that aborts when either does (`AbortSignal.any` is not in Node 18); `done` lets go
 * of the caller's signal, which outlives many polls.
 */
function either(a: AbortSignal, b: AbortSignal | undefined) {
  if (!b) return { signal: a, done: () => {} }
  const both = new AbortController()
  const fromA = () => both.abort(a.reason)
  const fromB = () => both.abort(b.reason)
  if (b.aborted) fromB()
  else if (a.aborted) fromA()
  a.addEventListener('abort', fromA, { once: true })
  b.addEventListener('abort', fromB, { once: true })
  const done = () => {
    a.removeEventListener('abort', fromA)
    b.removeEventListener('abort', fromB)
  }
  return { signal: both.signal, done }
}
