import type { Static } from '@sinclair/typebox'
import { Hark } from '../../sdk/typescript/src/client.ts'
import { HarkError } from '../../sdk/typescript/src/errors.ts'
import {
  type FetchLike,
  type Query,
  type RequestOptions,
  type RetryOptions,
  Transport,
} from '../../sdk/typescript/src/http.ts'
import type { PairingStart, ServerInfo } from '../../sdk/typescript/src/types.ts'
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

/**
 * The binary's typed layer over the SDK (sdk/typescript): the CLI, the MCP server, the hooks
 * and the tests use it. Every agent endpoint is called by the SDK's `Hark` (one implementation
 * of each call, of retries, bounds and idempotency keys); this file gives its answers the
 * server's own types and wire shapes (`{ message }`, `{ pins }`: what `--json` prints), and adds
 * the calls the SDK does not make: the agent's secrets and policies, the person's calls (tests)
 * and enrolment (`hark init`, `hark join`), on the SDK's `Transport`. Every failure is the SDK's
 * `HarkError` (`kind`: `http` with the server's `error` and the answer's headers, `network`,
 * `timeout`).
 */
export { HarkError }

/** How a client sends a request: the global fetch, or a test's in-process handler. */
export type Fetch = (request: Request) => Promise<Response>

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
   * top, an upload a second more per 64 KiB. Past it: a `HarkError` of kind `timeout`.
   */
  timeoutMs?: number
  /** Default: one attempt (the CLI's sessions ask for 5 and print each retry). */
  retry?: RetryOptions
}

export interface FeedParams {
  since?: number
  wait?: number
  sender?: 'human' | 'agent'
  peek?: boolean
  limit?: number
}

interface CallOptions {
  query?: Query
  json?: unknown
  body?: BodyInit
  headers?: Record<string, string>
  signal?: AbortSignal
}

/** The SDK's options of a client: a test's `Request` handler as the SDK's `fetch`. */
function sdkOptions(o: ClientOptions) {
  const handle = o.fetch
  const fetch: FetchLike | undefined = handle && ((url, init) => handle(new Request(url, init)))
  return {
    url: o.baseUrl,
    token: o.token,
    fetch,
    timeoutMs: o.timeoutMs,
    retry: { attempts: 1, ...o.retry },
    headers: o.headers,
  }
}

/** `raw` (any status) and `call` (the JSON answer, or a `HarkError`) over one transport. */
function calls(t: Transport) {
  const opts = (o: CallOptions): RequestOptions => ({
    ...o,
    body: o.body as RequestOptions['body'],
    holdSeconds: typeof o.query?.wait === 'number' ? o.query.wait : undefined,
  })
  return {
    raw: (method: string, path: string, o: CallOptions = {}) => t.raw(method, path, opts(o)),
    call: <T>(method: string, path: string, o: CallOptions = {}) =>
      t.json<T>(method, path, opts(o)),
  }
}

/**
 * Requests of routes that do not honour `Idempotency-Key` (the person's, enrolment): their
 * writes carry none, so one cut off mid-flight is not repeated.
 */
export function createTransport(options: ClientOptions) {
  return calls(new Transport({ ...sdkOptions(options), idempotencyKeys: false }))
}

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
/** The SDK's records are its own mirror of the server's; here they are the server's types. */
const as = <T>(value: unknown) => value as T

/**
 * The agent's client: one token, one channel; its writes carry idempotency keys. The calls are
 * the SDK's `Hark`; each answer comes back in the server's wire shape.
 */
export function createAgentClient(options: ClientOptions) {
  const hark = new Hark(sdkOptions(options))
  const transport = calls(hark.http)
  const { call } = transport
  const message = async (m: Promise<unknown>) => ({ message: as<Message>(await m) })
  const pin = async (p: Promise<unknown>) => ({ pin: as<Pin>(await p) })
  const ok = async (done: Promise<void>) => {
    await done
    return { ok: true as const }
  }
  return {
    ...transport,
    hark,
    send: (req: SendRequest) =>
      message(
        hark.send(as<Parameters<Hark['send']>[0]>(req.body), {
          silent: req.silent,
          expiresIn: req.expires_in,
          proof: req.proof,
        }),
      ),
    feed: async (p: FeedParams = {}, signal?: AbortSignal) =>
      as<FeedResponse>(await hark.feed({ ...p, signal })),
    edit: (messageId: string, req: EditRequest) =>
      message(hark.edit(messageId, as<Parameters<Hark['edit']>[1]>(req))),
    replace: (messageId: string, body: MessageBody) =>
      message(hark.replace(messageId, as<Parameters<Hark['replace']>[1]>(body))),
    remove: (messageId: string) => ok(hark.delete(messageId)),
    ack: (messageId: string, state: AckState) => message(hark.ack(messageId, state)),
    cancel: (messageId: string, reason?: string) => message(hark.cancel(messageId, reason)),

    asks: async () => ({ asks: as<Message[]>(await hark.asks()) }),
    ask: async (messageId: string, wait?: number, signal?: AbortSignal) =>
      as<{ message: Message; answer: unknown }>(await hark.getAsk(messageId, { wait, signal })),

    pins: async () => ({ pins: as<Pin[]>(await hark.pins()) }),
    pin: (key: string, req: PutPinRequest) =>
      pin(hark.pin(key, as<Parameters<Hark['pin']>[1]>(req.body), { silent: req.silent })),
    editPin: (key: string, req: EditRequest) =>
      pin(hark.editPin(key, as<Parameters<Hark['editPin']>[1]>(req))),
    unpin: (key: string) => ok(hark.unpin(key)),

    upload: async (name: string, data: BodyInit, mime = 'application/octet-stream') =>
      as<FileInfo>(await hark.upload(as<Parameters<Hark['upload']>[0]>(data), { name, mime })),
    /** A 2xx response (anything else is a `HarkError`). */
    download: (fileId: string) => hark.download(fileId),

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

    channel: async () => as<Static<typeof AgentChannelResponse>>(await hark.channel()),
    rename: async (label: string) => as<Static<typeof AgentResponse>>(await hark.rename(label)),
    health: () => hark.health(),
    info: (): Promise<ServerInfo> => hark.info(),
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
        query: { ...p },
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
