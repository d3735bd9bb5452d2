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
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number
  /** The first pause; it doubles on each retry up to `maxDelayMs`. */
  baseDelayMs: number
  maxDelayMs: number
  /** The longest `Retry-After` honoured; a longer one is handed back as the 429. */
  maxRetryAfterMs: number
  /** Told before each pause (the CLI prints it on stderr). */
  onRetry?: (reason: string, delayMs: number, attempt: number) => void
}

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
const GATEWAY = new Set([502, 503, 504])

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
export function pause(ms: number, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** `Retry-After` in whole seconds (what Hark sends) or an HTTP date; undefined when absent. */
export function retryAfterMs(headers: Headers, now = Date.now()): number | undefined {
  const raw = headers.get('retry-after')
  if (raw === null) return undefined
  if (/^\d+$/.test(raw.trim())) return Number(raw) * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

export function retryingFetch(inner: Fetch, policy: RetryPolicy = DEFAULT_RETRY): Fetch {
  const backoff = (attempt: number) =>
    Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
  return async (request, exchange?: Exchange) => {
    const idempotent = IDEMPOTENT.has(request.method) || request.headers.has('idempotency-key')
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= policy.attempts
      // Each attempt sends a copy: a body can be read once. The last sends the original. The
      // copy keeps the headers: a write's retries carry its one idempotency key. Each attempt
      // has the whole bound (`exchange`): a pause for a 429 does not eat into the next one.
      const sent = last ? request : request.clone()
      let response: Response
      try {
        response = await inner(sent, exchange)
      } catch (error) {
        const safe = idempotent || NOT_CONNECTED.has(networkErrorCode(error))
        if (last || !isNetworkError(error) || !safe) throw error
        const delay = backoff(attempt)
        policy.onRetry?.(cannotReach(error, request.url), delay, attempt)
        await pause(delay, request.signal)
        continue
      }
      let delay: number | undefined
      if (response.status === 429) {
        const asked = retryAfterMs(response.headers) ?? backoff(attempt)
        if (asked <= policy.maxRetryAfterMs) delay = asked
      } else if (idempotent && GATEWAY.has(response.status)) {
        delay = backoff(attempt)
      }
      if (last || delay === undefined) return response
      await response.body?.cancel()
      policy.onRetry?.(`the server answered ${response.status}`, delay, attempt)
      await pause(delay, request.signal)
    }
  }
}
