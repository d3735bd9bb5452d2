import { bounded, boundFor } from '../../sdk/typescript/src/http.ts'
import { UsageError } from '../core/errors.ts'

/**
 * Every request the agent's client makes is bounded (issue 16, defect 6): a server (or a proxy)
 * that accepts the connection and never answers must not hang a command, an agent's harness
 * waiting on it, or an MCP tool call.
 */

/** A plain request's bound; long-polls get their wait on top (`boundFor`). */
export const DEFAULT_TIMEOUT_MS = 30_000
/** What one HTTP exchange may take: past it the request is aborted. */
export interface Exchange {
  timeoutMs: number
}

/** No answer within the bound: the message names the request and the bound. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError'
  constructor(
    readonly method: string,
    readonly path: string,
    readonly timeoutMs: number,
  ) {
    super(
      `the server did not answer ${method} ${path} within ${seconds(timeoutMs)} ` +
        '(request timeout; set HARK_REQUEST_TIMEOUT to change it)',
    )
  }
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`

/** How long a request may take: `timeoutMs`, plus a long-poll's wait, plus an upload's time. */
export { boundFor }

/**
 * The global `fetch`, bounded: the answer must begin within `exchange.timeoutMs`, and its body
 * may then take as long as it keeps coming, with no silence longer than the bound (a large
 * download on a slow link is not cut; a server that stops half-way is). A timeout becomes a
 * `RequestTimeoutError`; the caller's own abort (the request's signal) stays what it was.
 */
export function boundedFetch(request: Request, exchange?: Exchange): Promise<Response> {
  if (!exchange) return fetch(request)
  const ms = exchange.timeoutMs
  return bounded(
    (signal) => fetch(request, { signal }),
    ms,
    request.signal,
    () => timeoutOf(request, ms),
  )
}

export const timeoutOf = (request: Request, timeoutMs: number) =>
  new RequestTimeoutError(request.method, new URL(request.url).pathname, timeoutMs)

/** `HARK_REQUEST_TIMEOUT` (seconds) as milliseconds; the default without it. */
export function requestTimeoutMs(env: Record<string, string | undefined>): number {
  const raw = env.HARK_REQUEST_TIMEOUT
  if (raw === undefined || raw === '') return DEFAULT_TIMEOUT_MS
  const s = Number(raw)
  if (!Number.isFinite(s) || s <= 0) {
    throw new UsageError(`HARK_REQUEST_TIMEOUT must be a positive number of seconds, not "${raw}"`)
  }
  return s * 1000
}
