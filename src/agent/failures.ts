import { UsageError } from '../core/errors.ts'
import { HarkError } from './client.ts'
import { cannotReach, isNetworkError } from './retry.ts'
import { isRequestTimeout, timeoutLine } from './timeouts.ts'

/** The agent CLI's exit codes; scripts branch on them. */
export const EXIT = {
  ok: 0,
  error: 1,
  usage: 2,
  /** No token, or the server refused it (401/403). */
  notAuthenticated: 4,
  /** A wait ran out (the same code as timeout(1)). */
  timeout: 124,
  /** Ctrl-C: 128 + SIGINT. */
  interrupted: 130,
} as const

/** An error the CLI reports as one line on stderr, with its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message)
  }
}

export const notConnected = (profile: string) =>
  new CliError(
    `not connected (profile "${profile}"): run "hark init URL" or "hark join LINK", or set HARK_URL and HARK_TOKEN`,
    EXIT.notAuthenticated,
  )

/**
 * A file operation of this machine that failed. Node's fs errors carry a `code`, the `syscall`
 * and the file's `path`; Bun's fetch errors carry a `code` too (so a code alone says nothing),
 * but their `path` is the URL.
 */
export function isLocalFileError(error: unknown): error is NodeJS.ErrnoException {
  if (!(error instanceof Error)) return false
  const { code, syscall, path } = error as NodeJS.ErrnoException
  return (
    typeof code === 'string' &&
    typeof syscall === 'string' &&
    typeof path === 'string' &&
    !/^[a-z][a-z0-9+.-]*:\/\//i.test(path)
  )
}

/** Why a file operation failed, in words a person acts on: `permission denied (EACCES)`. */
export function fileCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const { code } = error as NodeJS.ErrnoException
  // fs messages read "EACCES: permission denied, open '/x'": the path is named by the caller.
  const words = error.message.replace(/^[A-Z0-9_]+: /, '').replace(/, \w+ '.*$/, '')
  return typeof code === 'string' && !words.includes(code) ? `${words} (${code})` : words
}

/** A file of this machine that could not be read or written: its path and why (exit 1). */
export const fileError = (doing: string, path: string, error: unknown) =>
  new CliError(`cannot ${doing} ${path}: ${fileCause(error)}`)

export interface Failure {
  /** One line: what a person or a model reads. */
  message: string
  exitCode: number
  /** Where an unexpected failure happened (its stack): for a log or HARK_DEBUG, never shown. */
  detail?: string
}

/** The message and exit code of anything a command throws. */
export function describeFailure(error: unknown): Failure {
  if (error instanceof UsageError) return { message: error.message, exitCode: EXIT.usage }
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode }
  if (error instanceof HarkError && error.kind === 'http') {
    const auth = error.status === 401 || error.status === 403
    const hint =
      error.status === 401 ? ' (run "hark status", or connect again with "hark init")' : ''
    return {
      message: `${error.error}${hint}`,
      exitCode: auth ? EXIT.notAuthenticated : EXIT.error,
    }
  }
  if (isRequestTimeout(error)) return { message: timeoutLine(error), exitCode: EXIT.error }
  if (isLocalFileError(error)) {
    return {
      message: `cannot ${error.syscall} ${error.path}: ${fileCause(error)}`,
      exitCode: EXIT.error,
    }
  }
  if (isNetworkError(error) && hasCode(error)) {
    return {
      message: cannotReach(error),
      exitCode: EXIT.error,
    }
  }
  return {
    message: `unexpected error: ${firstLine(error)}`,
    exitCode: EXIT.error,
    detail: error instanceof Error ? error.stack : undefined,
  }
}

/**
 * Every failure of `fetch` carries a code (ECONNREFUSED, ECONNRESET, ENOTFOUND...); a TypeError
 * without one is a bug of ours (`undefined is not an object`), not a lost connection.
 */
function hasCode(error: unknown): boolean {
  if (error instanceof HarkError) return error.kind === 'network'
  const { code, cause } = error as { code?: unknown; cause?: { code?: unknown } }
  return typeof code === 'string' || typeof cause?.code === 'string'
}

const MAX_LINE = 200

/** An error's own words, one line, bounded: a stack or a dump says nothing to its reader. */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error)
  const line = text.split('\n', 1)[0]?.trim() || 'no message'
  return line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line
}
