import { type RetryPolicy, retryAfter, sleep, withRetries } from '../../sdk/typescript/src/http.ts'
import type { Fetch } from './client.ts'
import type { Exchange } from './timeouts.ts'

/**
 * A `fetch` that retries what is safe to retry, a bounded number of times: requests that never
 * reached the server (connection refused, name not resolved) whatever their method; idempotent
 * requests (GET, HEAD, PUT, DELETE, and any write that carries an `Idempotency-Key`) on any
 * network failure or a 502/503/504 from a proxy; and any request answered 429, after its
 * `Retry-After`. A write without a key cut off mid-flight is not repeated: it may have been
 * applied, and sending a message twice is worse than reporting the failure. With a key the
 * server answers a repeat with the first result and writes nothing, so repeating it is safe.
 * A request that timed out (`RequestTimeoutError`) is not repeated: the bound is the caller's.
 */
export type { RetryPolicy }

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 4000,
  maxRetryAfterMs: 60_000,
}

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS'])
/** Failures before any byte reached the server: retrying cannot apply a write twice. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ConnectionRefused',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'FailedToOpenSocket',
])

/** A failure to talk to the server at all (as opposed to an answer, or our own abort). */
export function isNetworkError(error: unknown): boolean {
  if (!(error instanceof Error) || error.name === 'AbortError' || error.name === 'TimeoutError') {
    return false
  }
  return typeof (error as { code?: unknown }).code === 'string' || error instanceof TypeError
}

export function networkErrorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code
  return typeof code === 'string' ? code : (error as Error).message
}

/**
 * Why a request got no answer, naming where it went: `cannot reach the server at
 * http://127.0.0.1:8080/v1/messages (ECONNREFUSED)`. A wrong HARK_URL or profile is the usual
 * cause, so the address is the first thing a reader needs. `url` is the request's; without it,
 * Bun's fetch errors carry it as `path`. The query is left out (cursors, search words).
 */
export function cannotReach(error: unknown, url?: string): string {
  const { path, cause } = error as { path?: unknown; cause?: { path?: unknown } }
  const tried = [url, path, cause?.path].find((p): p is string => typeof p === 'string')
  let where = ''
  try {
    if (tried !== undefined) {
      const u = new URL(tried)
      where = ` at ${u.origin}${u.pathname}`
    }
  } catch {
    // Not a URL: a file's path on an error that is not fetch's; name nothing.
  }
  return `cannot reach the server${where} (${networkErrorCode(error)})`
}

/** Resolves after `ms`, or rejects at once with the signal's reason when it aborts. */
export const pause = sleep

/** `Retry-After` in whole seconds or an HTTP date, in ms; undefined when absent. */
export const retryAfterMs = retryAfter

export function retryingFetch(inner: Fetch, policy: RetryPolicy = DEFAULT_RETRY): Fetch {
  return (request, exchange?: Exchange) => {
    const idempotent = IDEMPOTENT.has(request.method) || request.headers.has('idempotency-key')
    const retryable = {
      failure: (error: unknown) => {
        const safe = idempotent || NOT_CONNECTED.has(networkErrorCode(error))
        return isNetworkError(error) && safe ? cannotReach(error, request.url) : undefined
      },
      gateway: idempotent,
    }
    // Each attempt sends a copy: a body can be read once. The last sends the original. The
    // copy keeps the headers: a write's retries carry its one idempotency key. Each attempt
    // has the whole bound (`exchange`): a pause for a 429 does not eat into the next one.
    return withRetries(policy, retryable, request.signal, (last) =>
      inner(last ? request : request.clone(), exchange),
    )
  }
}
