/**
 * The transport: URLs, the bearer token, JSON, errors as `HarkError`, a bound on every request,
 * and retries of what is safe to repeat. Only `fetch`, `AbortController` and `setTimeout`: it
 * runs as is in Node 18+, Bun, Deno and browsers.
 */

import { cannotReach, errorOf, failureCode, HarkError, retryAfter } from './errors.ts'

export interface RetryOptions {
  /** Attempts in all, the first included (default 4). 1 turns retries off. */
  attempts?: number
  /** The first pause (default 250 ms); it doubles on each retry, up to 4 s. */
  baseDelayMs?: number
  /** The longest `Retry-After` waited for (default 60 s); a longer one is the 429 error. */
  maxRetryAfterMs?: number
  /**
   * Told before each pause: why (`cannot reach the server at https://host/v1/messages
   * (ECONNREFUSED)`, `the server answered 503`), how long, and which attempt failed. The `hark`
   * CLI prints it on stderr.
   */
  onRetry?: (reason: string, delayMs: number, attempt: number) => void
}

/** What the client calls to send a request: the global `fetch` fits, and so does a test's stub. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>

export interface TransportOptions {
  url: string
  /** The agent's token; without one no `Authorization` is sent (only `health()` answers). */
  token?: string
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike
  /** A plain request's bound (default 30 s); a long-poll gets its wait on top. */
  timeoutMs?: number
  retry?: RetryOptions
  /** Sent with every request (e.g. a `user-agent`). */
  headers?: Record<string, string>
  /**
   * Send an `Idempotency-Key` with every POST, PUT and PATCH (default true: every agent write
   * honours one). `false` is for routes that do not: their writes then carry no key, and one
   * cut off mid-flight is not repeated (it may have been applied); only a connection that was
   * never made, a GET/PUT/DELETE, and a 429 are retried.
   */
  idempotencyKeys?: boolean
}

/** A request's query: `undefined` values are left out. */
export type Query = Record<string, string | number | boolean | undefined>

export interface RequestOptions {
  query?: Query
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
const MAX_DELAY_MS = 4000

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
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

/**
 * A fresh `Idempotency-Key`: one per logical write, the same on each of its retries, so the
 * server applies the write once however often it arrives.
 */
export function newKey(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto
  if (c?.randomUUID) return c.randomUUID()
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}-${Math.random().toString(36).slice(2)}`
}

/**
 * How often and how patiently a request is repeated. The one retry of Hark's clients: this
 * SDK's `Transport` runs `withRetries`, and the `hark` binary's client (src/agent/client.ts)
 * is a `Transport`.
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

/** What may be repeated: the caller's judgement of a failure, and of a 502/503/504. */
export interface Retryable {
  /** Why a thrown failure may be retried (said to `onRetry`), or undefined when it may not. */
  failure: (error: unknown) => string | undefined
  /** Whether a 502/503/504 from a proxy is retried (only where a repeat cannot apply twice). */
  gateway: boolean
}

/**
 * Sends a request (`send`, told whether this is the last attempt) until it gets an answer not
 * worth repeating, and returns that answer, whatever its status: a failure `retryable.failure`
 * accepts, a 502/503/504 when `retryable.gateway`, and a 429 once its `Retry-After` (at most
 * `maxRetryAfterMs`) has passed are repeated, up to `attempts` in all, with a doubling pause.
 * The caller's abort (`signal`) ends a pause at once.
 */
export async function withRetries(
  policy: RetryPolicy,
  retryable: Retryable,
  signal: AbortSignal | null | undefined,
  send: (last: boolean) => Promise<Response>,
): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const last = attempt >= policy.attempts
    const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1))
    let response: Response
    try {
      response = await send(last)
    } catch (error) {
      const why = last ? undefined : retryable.failure(error)
      if (why === undefined) throw error
      policy.onRetry?.(why, backoff, attempt)
      await sleep(backoff, signal)
      continue
    }
    let delay: number | undefined
    if (response.status === 429) {
      const asked = retryAfter(response.headers) ?? backoff
      if (asked <= policy.maxRetryAfterMs) delay = asked
    } else if (retryable.gateway && GATEWAY.has(response.status)) {
      delay = backoff
    }
    if (last || delay === undefined) return response
    await response.body?.cancel().catch(() => {})
    policy.onRetry?.(`the server answered ${response.status}`, delay, attempt)
    await sleep(delay, signal)
  }
}

/**
 * A request's bound: `timeoutMs`, plus the seconds a long-poll may be held, plus a second per
 * 64 KiB of a body whose size is known (a large upload on a slow link is not cut).
 */
export function boundFor(timeoutMs: number, holdSeconds: unknown, body: unknown): number {
  const hold = typeof holdSeconds === 'number' && holdSeconds > 0 ? holdSeconds * 1000 : 0
  return timeoutMs + hold + Math.floor((sizeOf(body) * 1000) / UPLOAD_BYTES_PER_SECOND)
}

/** The slowest upload that still counts as moving. */
const UPLOAD_BYTES_PER_SECOND = 64 * 1024

/** A body's size when it is known before sending (a stream's is not: it gets the plain bound). */
function sizeOf(body: unknown): number {
  if (typeof Blob !== 'undefined' && body instanceof Blob) return body.size
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return body.byteLength
  if (typeof body === 'string') return body.length
  return 0
}

/**
 * One exchange, bounded: the answer must begin within `ms`, and its body may then take as long
 * as it keeps coming, with no silence longer than `ms` (a large download is not cut; a server
 * that stops half-way is). Past the bound the exchange is aborted with `timedOut()`; the
 * caller's own abort (`signal`) stays what it was. The one timeout of Hark's clients.
 */
export async function bounded(
  send: (signal: AbortSignal) => Promise<Response>,
  ms: number,
  signal: AbortSignal | null | undefined,
  timedOut: () => Error,
): Promise<Response> {
  if (signal?.aborted) throw signal.reason
  const controller = new AbortController()
  let timer: ReturnType<typeof setTimeout> | undefined
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => controller.abort(timedOut()), ms)
    // A timer must not keep a finished program alive (a body nobody reads to the end).
    ;(timer as { unref?: () => void }).unref?.()
  }
  const onAbort = () => controller.abort(signal?.reason)
  signal?.addEventListener('abort', onAbort, { once: true })
  const done = () => {
    clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
  }
  arm()
  let response: Response
  try {
    response = await send(controller.signal)
  } catch (error) {
    done()
    if (controller.signal.aborted && !signal?.aborted) throw timedOut()
    throw error
  }
  if (!response.body) {
    done()
    return response
  }
  arm()
  const watched = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        arm()
        out.enqueue(chunk)
      },
      flush: done,
    }),
  )
  const { status, statusText, headers } = response
  return new Response(watched, { status, statusText, headers })
}

export class Transport {
  readonly base: string
  private readonly token: string | undefined
  private readonly doFetch: FetchLike
  private readonly timeoutMs: number
  private readonly policy: RetryPolicy
  private readonly headers: Record<string, string>
  private readonly keys: boolean

  constructor(o: TransportOptions) {
    if (!o.url) throw new HarkError('a server URL is required', { kind: 'network' })
    this.base = o.url.replace(/\/+$/, '')
    this.token = o.token
    this.doFetch = o.fetch ?? ((input, init) => fetch(input, init))
    this.timeoutMs = o.timeoutMs ?? 30_000
    this.policy = {
      attempts: Math.max(1, o.retry?.attempts ?? 4),
      baseDelayMs: o.retry?.baseDelayMs ?? 250,
      maxDelayMs: MAX_DELAY_MS,
      maxRetryAfterMs: o.retry?.maxRetryAfterMs ?? 60_000,
      onRetry: o.retry?.onRetry,
    }
    this.headers = o.headers ?? {}
    this.keys = o.idempotencyKeys ?? true
  }

  url(path: string, query: Query = {}): string {
    return urlOf(this.base, path, query)
  }

  /** The JSON answer of a request (undefined for an empty one), or a `HarkError`. */
  async json<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const response = await this.request(method, path, o)
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      // The bound covers the body too: a server that stops half-way through is a timeout.
      if (error instanceof HarkError || o.signal?.aborted) throw o.signal?.reason ?? error
      const name = (error as Error)?.name
      if (name !== 'TimeoutError' && name !== 'AbortError') throw error
      const sent = o.json === undefined ? o.body : JSON.stringify(o.json)
      throw this.timedOut(method, path, boundFor(this.timeoutMs, o.holdSeconds, sent))
    }
    return (text ? JSON.parse(text) : undefined) as T
  }

  /**
   * The response of a request (2xx only; anything else is a `HarkError`). Writes carry an
   * `Idempotency-Key`, the same on each retry, so every request here is safe to repeat: after
   * a network failure or a 502/503/504 it is, a bounded number of times, and after a 429 once
   * its `Retry-After` has passed. The caller's abort is never retried.
   */
  async request(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const response = await this.raw(method, path, o)
    if (response.ok) return response
    throw await errorOf(response)
  }

  /**
   * The response of a request whatever its status, after the retries `request` makes: for a
   * caller that reads an error answer itself.
   */
  async raw(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers, ...o.headers }
    if (this.token) headers.authorization = `Bearer ${this.token}`
    const named = keyName(headers)
    if (o.idempotencyKey !== undefined) {
      if (named) delete headers[named]
      headers['idempotency-key'] = o.idempotencyKey
    } else if (!named && this.keys && WRITES.has(method)) headers['idempotency-key'] = newKey()
    let body: BodyInit | undefined = o.body as BodyInit | undefined
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(o.json)
    }
    const url = this.url(path, o.query)
    const boundMs = boundFor(this.timeoutMs, o.holdSeconds, body)
    // With a key the server answers a repeat with the first result and writes nothing; a write
    // without one cut off mid-flight may have been applied, so only a refused connection is.
    const idempotent = IDEMPOTENT.has(method) || keyName(headers) !== undefined
    const retryable: Retryable = {
      failure: (e) =>
        e instanceof HarkError &&
        e.kind === 'network' &&
        (idempotent || NOT_CONNECTED.has(failureCode(e.cause)))
          ? e.message
          : undefined,
      gateway: idempotent,
    }
    return withRetries(this.policy, retryable, o.signal, () =>
      this.once(url, { method, headers, body }, boundMs, o.signal),
    )
  }

  private timedOut(method: string, path: string, boundMs: number): HarkError {
    const seconds = Number((boundMs / 1000).toFixed(1))
    return new HarkError(`the server did not answer ${method} ${path} within ${seconds} s`, {
      kind: 'timeout',
    })
  }

  /** One attempt, bounded by `boundMs`; its failures as `HarkError`s. */
  private async once(
    url: string,
    init: RequestInit & { method: string },
    boundMs: number,
    signal?: AbortSignal,
  ): Promise<Response> {
    const path = new URL(url).pathname
    try {
      return await bounded(
        (s) => this.doFetch(url, { ...init, signal: s }),
        boundMs,
        signal,
        () => this.timedOut(init.method, path, boundMs),
      )
    } catch (error) {
      if (signal?.aborted) throw signal.reason
      if (error instanceof HarkError) throw error
      throw new HarkError(cannotReach(error, url), { kind: 'network', cause: error })
    }
  }
}

/** The name a caller gave an `Idempotency-Key` header under, in any case. */
const keyName = (headers: Record<string, string>) =>
  Object.keys(headers).find((h) => h.toLowerCase() === 'idempotency-key')

/** `base` + `path` with the query's defined values (a boolean as 1 or 0). */
export function urlOf(base: string, path: string, query: Query = {}): string {
  const u = new URL(base + path)
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined) u.searchParams.set(k, typeof v === 'boolean' ? (v ? '1' : '0') : `${v}`)
  }
  return u.href
}
