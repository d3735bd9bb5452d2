import type { Static } from '@sinclair/typebox'
import {
  errorFields,
  HarkError,
  newKey,
  type Query,
  retryAfter,
  urlOf,
} from '../../sdk/typescript/src/http.ts'
import type { AgentChannelResponse, AgentResponse } from '../channels/schema.ts'
import type { FileInfo } from '../files/schema.ts'
import type { SecretRead, SecretRecord } from '../messages/asks/secrets/service.ts'
import type { ChannelsResponse } from '../messages/channel-list/schema.ts'
import type { Pin, PutPinRequest } from '../messages/pin-schema.ts'
import type {
  AckState,
  EditRequest,
  FeedResponse,
  Message,
  MessageBody,
  SendRequest,
} from '../messages/schema.ts'
import type { PairingStart } from '../people/enrol/pairing.ts'
import type { Info } from '../server/public-routes.ts'
import {
  boundedFetch,
  boundFor,
  DEFAULT_TIMEOUT_MS,
  type Exchange,
  RequestTimeoutError,
  timeoutOf,
} from './timeouts.ts'

/**
 * The binary's typed HTTP client of the API: the CLI, the MCP server, the hooks and the tests
 * use it. Its transport is the SDK's (sdk/typescript/src/http.ts: retries, bounds, idempotency
 * keys, URLs, error answers); this file adds the server's own types, and the person's and
 * enrolment calls the SDK does not make. Every non-2xx answer becomes a `HarkApiError`: the
 * SDK's `HarkError` with the server's `error` and the answer's headers.
 */
export class HarkApiError extends HarkError {
  constructor(
    status: number,
    readonly error: string,
    field: string | undefined,
    readonly headers: Headers,
  ) {
    super(`${status}: ${error}`, {
      status,
      field,
      kind: 'http',
      retryAfterMs: status === 429 ? retryAfter(headers) : undefined,
    })
  }
}

/**
 * How the client sends a request. `exchange` says how long it may take (see timeouts.ts):
 * `boundedFetch` and `retryingFetch` honour it; a test's in-process handler may ignore it.
 */
export type Fetch = (request: Request, exchange?: Exchange) => Promise<Response>

/** The `HarkApiError` of a non-2xx response (its body is read), for callers of `raw`. */
export async function apiError(response: Response): Promise<HarkApiError> {
  const { error, field } = errorFields(await response.text(), response.statusText)
  return new HarkApiError(response.status, error, field, response.headers)
}

export interface ClientOptions {
  baseUrl: string
  token?: string
  /** Defaults to the global fetch; tests pass the app's own `handle`. */
  fetch?: Fetch
  /**
   * Sent with every request: a browser session instead of a token (`cookie` and the app's
   * `origin`), for what only a session may do.
   */
  headers?: Record<string, string>
  /**
   * A plain request's bound in milliseconds (default 30 s); a long-poll may take its wait on
   * top, an upload a second more per 64 KiB. Past it: `RequestTimeoutError`.
   */
  timeoutMs?: number
  /**
   * Send a fresh `Idempotency-Key` with every POST, PUT and PATCH (the same one on each retry
   * of it), so `retryingFetch` may repeat a write cut off mid-flight. The agent's client does;
   * the person's and enrolment routes do not honour keys, so their clients do not claim it.
   */
  idempotencyKeys?: boolean
}

export interface FeedParams {
  since?: number
  wait?: number
  sender?: 'human' | 'agent'
  peek?: boolean
  limit?: number
}

interface RequestOptions {
  query?: Query
  json?: unknown
  body?: BodyInit
  headers?: Record<string, string>
  signal?: AbortSignal
}

const KEYED = new Set(['POST', 'PUT', 'PATCH'])

/** The transport both clients share: URLs, the token, JSON, and errors as `HarkApiError`. */
export function createTransport(options: ClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '')
  const doFetch: Fetch = options.fetch ?? boundedFetch
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS

  const url = (path: string, query?: Query) => urlOf(base, path, query)

  /** The request a call sends, and how long it may take. */
  function prepare(method: string, path: string, o: RequestOptions) {
    const headers: Record<string, string> = { ...options.headers, ...o.headers }
    if (options.token) headers.authorization = `Bearer ${options.token}`
    // One key per logical call: retries copy the request, so they carry the same one.
    if (options.idempotencyKeys && KEYED.has(method) && !hasKey(headers)) {
      headers['idempotency-key'] = newKey()
    }
    let body = o.body
    if (o.json !== undefined) {
      headers['content-type'] = 'application/json'
      body = JSON.stringify(o.json)
    }
    const request = new Request(url(path, o.query), { method, headers, body, signal: o.signal })
    return { request, exchange: { timeoutMs: boundFor(timeoutMs, o.query?.wait, body) } }
  }

  /** The raw response, whatever its status. */
  function raw(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const { request, exchange } = prepare(method, path, o)
    return doFetch(request, exchange)
  }

  async function call<T>(method: string, path: string, o: RequestOptions = {}): Promise<T> {
    const { request, exchange } = prepare(method, path, o)
    const response = await doFetch(request, exchange)
    if (!response.ok) throw await apiError(response)
    let text: string
    try {
      text = await response.text()
    } catch (error) {
      // The bound covers the body too: a server that stops half-way through is a timeout.
      if (error instanceof RequestTimeoutError) throw error
      const ours = (error as Error)?.name === 'TimeoutError' && !o.signal?.aborted
      throw ours ? timeoutOf(request, exchange.timeoutMs) : error
    }
    try {
      return (text ? JSON.parse(text) : undefined) as T
    } catch {
      return undefined as T
    }
  }

  return {
    raw,
    call,
    health: () => call<{ ok: true }>('GET', '/health'),
    info: () => call<Static<typeof Info>>('GET', '/v1/info'),
  }
}

const hasKey = (headers: Record<string, string>) =>
  Object.keys(headers).some((h) => h.toLowerCase() === 'idempotency-key')

export type { PairingStart }

/** A policy as the server hands it over: verified by the agent (src/agent/policy.ts). */
export interface ServedPolicy {
  id: string
  /** The signed claim, canonical JSON, as the app signed it. */
  claim: string
  proof: unknown
  revocation?: { claim: string; proof: unknown }
}

export interface IssuedToken {
  token: string
  channel: { id: string; label: string }
}

export type PairingPoll =
  | { status: 'pending' | 'denied' | 'expired' }
  | ({ status: 'approved' } & IssuedToken)

/** Getting an agent token without one: `hark init`'s device flow and `hark join`'s links. */
export function createEnrolmentClient(options: ClientOptions) {
  const t = createTransport(options)
  const { call } = t
  return {
    ...t,
    /** `host`: this machine's name, shown to the person with the code (where it comes from). */
    startPairing: (label?: string, host?: string) =>
      call<PairingStart>('POST', '/v1/pair/start', {
        json: { ...(label === undefined ? {} : { label }), ...(host ? { host } : {}) },
      }),
    /** Held up to `wait` seconds until the person approves or denies; 404 once redeemed. */
    pollPairing: (deviceCode: string, wait?: number, signal?: AbortSignal) =>
      call<PairingPoll>('POST', '/v1/pair/token', {
        query: { wait },
        json: { device_code: deviceCode },
        signal,
      }),
    join: (code: string) => call<IssuedToken>('POST', '/v1/join', { json: { code } }),
  }
}

const id = encodeURIComponent
const feedQuery = (p: FeedParams): Query => ({
  since: p.since,
  wait: p.wait,
  sender: p.sender,
  peek: p.peek,
  limit: p.limit,
})

/** The agent's client: one token, one channel; its writes carry idempotency keys. */
export function createAgentClient(options: ClientOptions) {
  const t = createTransport({ idempotencyKeys: true, ...options })
  const { call, raw } = t
  return {
    ...t,
    send: (req: SendRequest) => call<{ message: Message }>('POST', '/v1/messages', { json: req }),
    feed: (p: FeedParams = {}, signal?: AbortSignal) =>
      call<FeedResponse>('GET', '/v1/messages', { query: feedQuery(p), signal }),
    edit: (messageId: string, req: EditRequest) =>
      call<{ message: Message }>('PATCH', `/v1/messages/${id(messageId)}`, { json: req }),
    replace: (messageId: string, body: MessageBody) =>
      call<{ message: Message }>('PUT', `/v1/messages/${id(messageId)}`, { json: { body } }),
    remove: (messageId: string) => call<{ ok: true }>('DELETE', `/v1/messages/${id(messageId)}`),
    ack: (messageId: string, state: AckState) =>
      call<{ message: Message }>('POST', `/v1/messages/${id(messageId)}/state`, {
        json: { state },
      }),
    cancel: (messageId: string, reason?: string) =>
      call<{ message: Message }>('POST', `/v1/messages/${id(messageId)}/cancel`, {
        json: reason === undefined ? {} : { reason },
      }),

    asks: () => call<{ asks: Message[] }>('GET', '/v1/asks'),
    ask: (messageId: string, wait?: number, signal?: AbortSignal) =>
      call<{ message: Message; answer: unknown }>('GET', `/v1/asks/${id(messageId)}`, {
        query: { wait },
        signal,
      }),

    pins: () => call<{ pins: Pin[] }>('GET', '/v1/pins'),
    pin: (key: string, req: PutPinRequest) =>
      call<{ pin: Pin }>('PUT', `/v1/pins/${id(key)}`, { json: req }),
    editPin: (key: string, req: EditRequest) =>
      call<{ pin: Pin }>('PATCH', `/v1/pins/${id(key)}`, { json: req }),
    unpin: (key: string) => call<{ ok: true }>('DELETE', `/v1/pins/${id(key)}`),

    upload: (name: string, data: BodyInit, mime = 'application/octet-stream') =>
      call<FileInfo>('POST', '/v1/files', {
        query: { name },
        body: data,
        headers: { 'content-type': mime },
      }),
    download: (fileId: string) => raw('GET', `/v1/files/${id(fileId)}`),

    /** Asks for a secret encrypted to `public_key` (see src/secrets/crypto.ts). */
    requestSecret: (req: { name: string; description?: string; public_key: string }) =>
      call<{ secret_request: SecretRecord }>('POST', '/v1/secrets', { json: req }),
    /** Held while pending; the answer that carries `ciphertext` is the only one that will. */
    secret: (secretId: string, wait?: number, signal?: AbortSignal) =>
      call<SecretRead>('GET', `/v1/secrets/${id(secretId)}`, { query: { wait }, signal }),
    cancelSecret: (secretId: string) =>
      call<{ secret_request: SecretRecord }>('DELETE', `/v1/secrets/${id(secretId)}`),

    /** The signed policies naming this agent; verified by the agent (src/agent/policy.ts). */
    policies: () => call<{ policies: ServedPolicy[] }>('GET', '/v1/policies'),
    /** Reports an action decided by a policy: counted, and one quiet line in the thread. */
    policyUse: (policyId: string, summary: string) =>
      call<unknown>('POST', `/v1/policies/${id(policyId)}/uses`, { json: { summary } }),

    channel: () => call<Static<typeof AgentChannelResponse>>('GET', '/v1/channel'),
    rename: (label: string) =>
      call<Static<typeof AgentResponse>>('PATCH', '/v1/agent', { json: { label } }),
  }
}

/** The person's client (a person token): their channels, feeds, messages and answers. */
export function createPersonClient(options: ClientOptions) {
  const t = createTransport(options)
  const { call } = t
  return {
    ...t,
    channels: () => call<Static<typeof ChannelsResponse>>('GET', '/v1/app/channels'),
    feed: (channelId: string, p: FeedParams = {}, signal?: AbortSignal) =>
      call<FeedResponse>('GET', `/v1/app/channels/${id(channelId)}/messages`, {
        query: feedQuery(p),
        signal,
      }),
    send: (channelId: string, body: MessageBody) =>
      call<{ message: Message }>('POST', `/v1/app/channels/${id(channelId)}/messages`, {
        json: { body },
      }),
    openAsks: (kind?: 'approval') =>
      call<{ asks: Message[] }>('GET', '/v1/app/asks', { query: { type: kind } }),
    answer: (messageId: string, answer: unknown) =>
      call<{ message: Message; answer: unknown }>(
        'POST',
        `/v1/app/messages/${id(messageId)}/answer`,
        { json: { answer } },
      ),
    secret: (secretId: string) =>
      call<{ secret_request: SecretRecord }>('GET', `/v1/app/secrets/${id(secretId)}`),
    fulfilSecret: (secretId: string, ciphertext: string) =>
      call<{ secret_request: SecretRecord }>('POST', `/v1/app/secrets/${id(secretId)}/fulfil`, {
        json: { ciphertext },
      }),
    approvePairing: (userCode: string, label?: string) =>
      call<{ channel: { id: string; label: string } }>(
        'POST',
        `/v1/app/pairings/${id(userCode)}/approve`,
        { json: label === undefined ? {} : { label } },
      ),
    denyPairing: (userCode: string) =>
      call<unknown>('POST', `/v1/app/pairings/${id(userCode)}/deny`),
    createJoinLink: (req: { label?: string; channel_id?: string } = {}) =>
      call<{ join_link: { id: string; link: string; code: string; expires_at: number } }>(
        'POST',
        '/v1/app/join-links',
        { json: req },
      ),
  }
}

export type AgentClient = ReturnType<typeof createAgentClient>
export type EnrolmentClient = ReturnType<typeof createEnrolmentClient>
export type PersonClient = ReturnType<typeof createPersonClient>
