import { HarkError } from '../../sdk/typescript/src/errors.ts'
import { UsageError } from '../core/errors.ts'

/**
 * Every request the agent's client makes is bounded (issue 16, defect 6): a server (or a proxy)
 * that accepts the connection and never answers must not hang a command, an agent's harness
 * waiting on it, or an MCP tool call. The bound itself is the SDK's transport's (the answer's
 * head within it, then no silence longer than it; a long-poll's wait and an upload's time on
 * top); this file names the binary's default and its setting.
 */

/** A plain request's bound; long-polls get their wait on top. */
export const DEFAULT_TIMEOUT_MS = 30_000

/** No answer within the bound (the SDK's `HarkError` of kind `timeout`). */
export const isRequestTimeout = (error: unknown): error is HarkError =>
  error instanceof HarkError && error.kind === 'timeout'

/** A timeout as the CLI says it: the request and the bound, and the setting that moves it. */
export const timeoutLine = (error: HarkError) =>
  `${error.message} (request timeout; set HARK_REQUEST_TIMEOUT to change it)`

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
