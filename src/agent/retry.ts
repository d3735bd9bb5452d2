import { HarkError, cannotReach as sdkCannotReach } from '../../sdk/typescript/src/errors.ts'

/**
 * What the binary's clients may repeat, said once: the SDK's transport
 * (sdk/typescript/src/http.ts) repeats requests that never reached the server (connection refused, name not resolved)
 * whatever their method; idempotent requests (GET, HEAD, PUT, DELETE, and any write that
 * carries an `Idempotency-Key`) on any network failure or a 502/503/504 from a proxy; and any
 * request answered 429, after its `Retry-After`. A write without a key cut off mid-flight is
 * not repeated: it may have been applied. The agent's writes all carry keys; the person's and
 * enrolment ones none. A request that timed out is not repeated: the bound is the caller's.
 * The binary tries 5 times in all (the SDK's default is 4), from 250 ms doubling to 4 s.
 */
export const DEFAULT_ATTEMPTS = 5

/** A failure to talk to the server at all (as opposed to an answer, or our own abort). */
export function isNetworkError(error: unknown): boolean {
  if (error instanceof HarkError) return error.kind === 'network'
  if (!(error instanceof Error) || error.name === 'AbortError' || error.name === 'TimeoutError') {
    return false
  }
  return typeof (error as { code?: unknown }).code === 'string' || error instanceof TypeError
}

/** Why a request got no answer, naming where it went (see the SDK's `cannotReach`). */
export const cannotReach = (error: unknown, url?: string) =>
  error instanceof HarkError && error.kind === 'network'
    ? error.message
    : sdkCannotReach(error, url)
