/**
 * The transport: URLs, the bearer token, JSON, errors as `HarkError`, a bound on every request,
 * and retries of what is safe to repeat. Only `fetch`, `AbortController` and `setTimeout`: it
 * runs as is in Node 18+, Bun, Deno and browsers.
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

  constructor(
    message: string,
    options: {
      status?: number
      field?: string
      kind?: 'http' | 'network' | 'timeout'
      retryAfterMs?: number
      cause?: unknown
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.status = options.status ?? 0
    this.field = options.field
    this.kind = options.kind ?? 'http'
    this.retryAfterMs = options.retryAfterMs
  }
}

export interface RetryOptions {
  /** Attempts in all, the first included (default 4). 1 turns retries off. */
  attempts?: number
  /** The first pause (default 250 ms); it doubles on each retry, up to 4 s. */
  baseDelayMs?: number
  /** The longest `Retry-After` waited for (default 60 s); a longer one is the 429 error. */
  maxRetryAfterMs?: number
}

/** What the client calls to send a request: the global `fetch` fits, and so does a test's stub. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

export interface TransportOptions {
  url: string
  token: string
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike
  /** A plain request's bound (default 30 s); a long-poll gets its wait on top. */
  timeoutMs?: number
  retry?: RetryOptions
  /** Sent with every request (e.g. a `user-agent`). */
  headers?: Record<string, string>
}

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>
  json?: unknown
  body?: Blob | ArrayBuffer | Uint8Array | string
  headers?: Record<string, string>
  signal?: AbortSignal
  /** Seconds the server may hold the request (a long-poll's `wait`), added to the bound. */
  holdSeconds?: number
  /** For a write: the key its retries share; a fresh one when absent. */
  idempotencyKey?: string
}

const WRITES = new Set(['POST', 'PUT', 'PATCH'])
const GATEWAY = new Set([502, 503, 504])
const MAX_DELAY_MS = 4000

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** `Retry-After` in seconds or as an HTTP date. */
function retryAfter(headers: Headers): number | undefined {
  const raw = headers.get('retry-after')?.trim()
  if (!raw) return undefined
  if (/^\d+$/.test(raw)) return Number(raw) * 1000
  const at = Date.parse(raw)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}

function newKey(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  if (c?.randomUUID) return c.randomUUID()
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`
}

export class Transport {
  readonly base: string
  private readonly token: string
  private readonly doFetch: FetchLike
  private readonly timeoutMs: number
  private readonly attempts: number
  private readonly baseDelayMs: number
  private readonly maxRetryAfterMs: number
  private readonly headers: Record<string, string>

  constructor(o: TransportOptions) {
    if (!o.url) throw new HarkError('a server URL is required', { kind: 'network' })
    if (!o.token) throw new HarkError('an agent token is required', { status: 401 })
    this.base = o.url.replace(/\/+$/, '')
    this.token = o.token
    this.doFetch = o.fetch ?? ((input, init) => fetch(input, init))
    this.timeoutMs = o.timeoutMs ?? 30_000
    this.attempts = Math.max(1, o.retry?.attempts ?? 4)
    this.baseDelayMs = o.retry?.baseDelayMs ?? 250
    this.maxRetryAfterMs = o.retry?.maxRetryAfterMs ?? 60_000
    this.headers = o.headers ?? {}
  }

  url(path: string, query: RequestOptions['query'] = {}): string {
    const u = new URL(this.base + path)
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined) u.searchParams.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : `${v}`)
    }
    return u.href
  }

  /** The JSON answer of a request, or a `HarkError`. */
  async json<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, path, o)
    const text = await response.text()
    return (text ? JSON.parse(text) : undefined) as T
  }

  /**
   * The response of a request (2xx only; anything else is a `HarkError`). Writes carry an
   * `Idempotency-Key`, the same on each retry, so every request here is safe to repeat: after
   * a network failure or a 502/503/504 it is, a bounded number of times, and after a 429 once
   * its `Retry-After` has passed. The caller's abort is never retried.
   */
  async request(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = {
      ...this.headers,
      ...o.headers,
      authorization: `Bearer ${this.token}`,
    }
    if (WRITES.has(method)) headers['idempotency-key'] = o.idempotencyKey ?? newKey()
    let body: BodyInit | undefined = o.body as BodyInit | undefined
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(o.json)
    }
    const url = this.url(path, o.query)
    const boundMs = this.timeoutMs + (o.holdSeconds ?? 0) * 1000
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= this.attempts
      const backoff = Math.min(MAX_DELAY_MS, this.baseDelayMs * 2 ** (attempt - 1))
      let response: Response
      try {
        response = await this.once(url, { method, headers, body }, boundMs, o.signal)
      } catch (error) {
        if (o.signal?.aborted) throw o.signal.reason
        if (last || (error as HarkError).kind !== 'network') throw error
        await sleep(backoff, o.signal)
        continue
      }
      if (response.ok) return response
      let delay: number | undefined
      if (response.status === 429) {
        const asked = retryAfter(response.headers) ?? backoff
        if (asked <= this.maxRetryAfterMs) delay = asked
      } else if (GATEWAY.has(response.status)) {
        delay = backoff
      }
      if (last || delay === undefined) throw await errorOf(response)
      await response.body?.cancel().catch(() => {})
      await sleep(delay, o.signal)
    }
  }

  /** One attempt, aborted after `boundMs` (the answer's head must come within it). */
  private async once(
    url: string,
    init: RequestInit,
    boundMs: number,
    signal?: AbortSignal,
  ): Promise<Response> {
    if (signal?.aborted) throw signal.reason
    const controller = new AbortController()
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      controller.abort()
    }, boundMs)
    const onAbort = () => controller.abort(signal?.reason)
    signal?.addEventListener('abort', onAbort, { once: true })
    try {
      return await this.doFetch(url, { ...init, signal: controller.signal })
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (timedOut) {
        throw new HarkError(`no answer from ${this.base} within ${Math.round(boundMs / 1000)} s`, {
          kind: 'timeout',
          cause: error,
        })
      }
      const why = (error as { cause?: { code?: string } })?.cause?.code ?? (error as Error)?.message
      throw new HarkError(`cannot reach ${this.base} (${why})`, { kind: 'network', cause: error })
    } finally {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    }
  }
}

/** The `HarkError` of an error answer: the server's `{ error, field }`. */
export async function errorOf(response: Response): Promise<HarkError> {
  const text = await response.text().catch(() => '')
  let data: { error?: unknown; field?: unknown } = {}
  try {
    data = JSON.parse(text)
  } catch {}
  const error = typeof data?.error === 'string' ? data.error : text || response.statusText
  const field = typeof data?.field === 'string' ? data.field : undefined
  // The server's message already names the field ("body.blocks[0].id: is required").
  return new HarkError(`${response.status}: ${error}`, {
    status: response.status,
    field,
    kind: 'http',
    retryAfterMs: response.status === 429 ? retryAfter(response.headers) : undefined,
  })
}
