/**
 * Hark's one error, and how an answer or a failure becomes one: the server's `{ error, field }`,
 * a network failure naming the URL tried, `Retry-After`.
 */

/** Every failure the client reports: an HTTP error answer, a network failure or a timeout. */
export class HarkError extends Error {
  override readonly name = 'HarkError'
  /** The HTTP status; 0 when no answer came (`network` or `timeout`). */
  readonly status: number
  /** The request field at fault, when the server names one (`body.blocks[0].options`). */
  readonly field: string | undefined
  readonly kind: 'http' | 'network' | 'timeout'
  /** From a 429's `Retry-After`, in milliseconds. */
  readonly retryAfterMs: number | undefined
  /** An `http` failure's own words from the server (the message without its status). */
  readonly error: string
  /** An `http` failure's answer headers (`Retry-After`, `WWW-Authenticate`...). */
  readonly headers: Headers | undefined

  constructor(
    message: string,
    options: {
      status?: number
      field?: string
      kind?: 'http' | 'network' | 'timeout'
      retryAfterMs?: number
      cause?: unknown
      error?: string
      headers?: Headers
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.status = options.status ?? 0
    this.field = options.field
    this.kind = options.kind ?? 'http'
    this.retryAfterMs = options.retryAfterMs
    this.error = options.error ?? message
    this.headers = options.headers
  }
}

/** `Retry-After` in whole seconds (what Hark sends) or an HTTP date; undefined when absent. */
export function retryAfter(headers: Headers, now = Date.now()): number | undefined {
  const raw = headers.get('retry-after')?.trim()
  if (!raw) return undefined
  if (/^\d+$/.test(raw)) return Number(raw) * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * What a failure to talk to the server says of itself: its `code` (`ECONNREFUSED`, Bun's
 * `ConnectionRefused`), else its cause's (Node's `fetch failed`), else its message.
 */
export function failureCode(error: unknown): string {
  const { code, cause } = (error ?? {}) as { code?: unknown; cause?: { code?: unknown } }
  if (typeof code === 'string') return code
  if (typeof cause?.code === 'string') return cause.code
  return error instanceof Error ? error.message : String(error)
}

/**
 * Why a request got no answer, naming where it went: `cannot reach the server at
 * http://127.0.0.1:8080/v1/messages (ECONNREFUSED)`. A wrong URL is the usual cause, so the
 * address is the first thing a reader needs. The query is left out (cursors, search words).
 */
export function cannotReach(error: unknown, url?: string): string {
  const { path, cause } = (error ?? {}) as { path?: unknown; cause?: { path?: unknown } }
  const tried = [url, path, cause?.path].find((p): p is string => typeof p === 'string')
  let where = ''
  try {
    if (tried !== undefined) {
      const u = new URL(tried)
      where = ` at ${u.origin}${u.pathname}`
    }
  } catch {
    // Not a URL: name nothing.
  }
  return `cannot reach the server${where} (${failureCode(error)})`
}

/**
 * The server's `{ error, field }` from an error answer's text; the text itself (or the status
 * text) when it is not that JSON. The server's message already names the field
 * ("body.blocks[0].id: is required").
 */
export function errorFields(
  text: string,
  statusText: string,
): { error: string; field: string | undefined } {
  let data: { error?: unknown; field?: unknown } = {}
  try {
    data = JSON.parse(text)
  } catch {}
  return {
    error: typeof data?.error === 'string' ? data.error : text || statusText,
    field: typeof data?.field === 'string' ? data.field : undefined,
  }
}

/** The `HarkError` of an error answer: the server's `{ error, field }`. */
export async function errorOf(response: Response): Promise<HarkError> {
  const text = await response.text().catch(() => '')
  const { error, field } = errorFields(text, response.statusText)
  return new HarkError(`${response.status}: ${error}`, {
    status: response.status,
    field,
    kind: 'http',
    retryAfterMs: response.status === 429 ? retryAfter(response.headers) : undefined,
    error,
    headers: response.headers,
  })
}
