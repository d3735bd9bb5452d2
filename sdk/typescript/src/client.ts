import { HarkError } from './errors.ts'
import { type RequestOptions, Transport, type TransportOptions } from './http.ts'
import type {
  AckState,
  Answer,
  AnswerOf,
  AskResult,
  Block,
  Channel,
  DeletedMessage,
  EditRequest,
  FeedPage,
  FileInfo,
  Message,
  MessageBody,
  Pin,
  ServerInfo,
} from './types.ts'
import { MAX_WAIT_SECONDS, pollUntil } from './wait.ts'

export { MAX_WAIT_SECONDS }

export interface HarkOptions extends TransportOptions {}

/** Options of every call: the caller's abort, and for a write the key its retries share. */
export interface CallOptions {
  signal?: AbortSignal
  /** Defaults to a fresh `crypto.randomUUID()` per call; pass one to span your own retries. */
  idempotencyKey?: string
}

export interface SendOptions extends CallOptions {
  /** No push notification. */
  silent?: boolean
  /** A question expires after this many seconds; its answer becomes the inputs' defaults. */
  expiresIn?: number
  /**
   * A question whose answer the person signs with a passkey: the answer comes with a `proof`
   * over the question's `ask.request_hash`, which the agent can check against the keys
   * `channel()` reports.
   */
  proof?: boolean
}

export interface WaitOptions {
  /** The whole wait, in ms; undefined waits until the question is settled or `signal` aborts. */
  timeoutMs?: number
  signal?: AbortSignal
  /**
   * Told once when the server is lost during the wait, and once when it is back (one line
   * each, e.g. for a log; the `hark` CLI prints them on stderr). The wait goes on regardless.
   */
  onOutage?: (line: string) => void
}

export interface FeedOptions {
  /** The cursor to read after; 0 is the start of the channel. */
  since?: number
  /** Seconds to hold the request when nothing is new (at most 55). */
  wait?: number
  sender?: 'human' | 'agent'
  /** Do not mark the person's messages seen. */
  peek?: boolean
  limit?: number
  signal?: AbortSignal
}

export interface InboxOptions {
  /** Seconds to wait for a first new message (default 0: answer at once). */
  wait?: number
  peek?: boolean
  signal?: AbortSignal
}

type Body<Bs extends readonly Block[] = readonly Block[]> = string | MessageBody<Bs>

/**
 * An id or key as a path segment. An empty one is the caller's mistake, refused before any
 * request: sent, `/v1/asks/` would name the list of questions, not one of them.
 */
const enc = (value: string, name = 'id'): string => {
  if (value === '') throw new TypeError(`${name}: is required`)
  return encodeURIComponent(value)
}
const bodyOf = <Bs extends readonly Block[]>(b: Body<Bs>): MessageBody<Bs> =>
  typeof b === 'string' ? { text: b } : b
const isDeleted = (m: Message | DeletedMessage): m is DeletedMessage => 'deleted' in m

/**
 * An agent's client: one token, one channel.
 *
 * ```ts
 * const hark = new Hark({ url: 'https://hark.example.com', token: process.env.HARK_TOKEN! })
 * await hark.send('build is green')
 * const { answer } = await hark.askAndWait({
 *   title: 'Deploy?',
 *   blocks: [{ type: 'confirm', id: 'go', label: 'Deploy' }],
 * })
 * ```
 */
export class Hark {
  readonly http: Transport
  /** Where `inbox()` has read up to; keep it across runs to resume there. */
  cursor = 0

  constructor(options: HarkOptions) {
    this.http = new Transport(options)
  }

  private write<T>(method: string, path: string, o: CallOptions & RequestOptions): Promise<T> {
    return this.http.json<T>(method, path, o)
  }

  /** Sends a message (a string is its text). With an input block it is a question. */
  async send(body: Body, options: SendOptions = {}): Promise<Message> {
    const json = {
      body: bodyOf(body),
      ...(options.silent === undefined ? {} : { silent: options.silent }),
      ...(options.expiresIn === undefined ? {} : { expires_in: options.expiresIn }),
      ...(options.proof ? { proof: true } : {}),
    }
    const r = await this.write<{ message: Message }>('POST', '/v1/messages', { ...options, json })
    return r.message
  }

  /** Sends a question (a body with at least one input block); `waitForAnswer` reads its answer. */
  ask(body: MessageBody, options: SendOptions = {}): Promise<Message> {
    return this.send(body, options)
  }

  /**
   * Sends a question and waits for it to be settled. The answer is typed from the blocks: one
   * confirm → `true`, a multi choice → `string[]`, several inputs → `{ [id]: value }`.
   */
  async askAndWait<const Bs extends readonly Block[]>(
    body: MessageBody<Bs>,
    options: SendOptions & WaitOptions = {},
  ): Promise<AskResult<AnswerOf<Bs>>> {
    const message = await this.send(body as MessageBody, options)
    return this.waitForAnswer<AnswerOf<Bs>>(message.id, options)
  }

  /** One read of a question, held up to `wait` seconds while it is open. */
  async getAsk(
    id: string,
    options: { wait?: number; signal?: AbortSignal } = {},
  ): Promise<{ message: Message; answer: Answer | null }> {
    const wait = options.wait === undefined ? undefined : Math.min(MAX_WAIT_SECONDS, options.wait)
    return this.http.json('GET', `/v1/asks/${enc(id)}`, {
      query: { wait },
      holdSeconds: wait,
      signal: options.signal,
    })
  }

  /**
   * Waits until the question is answered, expires or is cancelled, polling the server's 55 s
   * long-poll again and again; ends with status `timeout` (the question still open) once
   * `timeoutMs` has passed. A server restart or a dropped connection does not end the wait.
   * An abort of `signal` rejects with its reason.
   */
  async waitForAnswer<A = Answer>(id: string, options: WaitOptions = {}): Promise<AskResult<A>> {
    const deadline = options.timeoutMs === undefined ? Infinity : Date.now() + options.timeoutMs
    let last: Message | undefined
    const settled = await pollUntil<AskResult<A>>(
      async (wait, signal) => {
        const { message, answer } = await this.getAsk(id, { wait, signal })
        last = message
        const status = message.ask?.status
        if (status === undefined) throw new HarkError(`${id} is not a question`, { status: 400 })
        return status === 'open' ? undefined : { status, answer: (answer ?? null) as A, message }
      },
      { deadline, signal: options.signal, onOutage: options.onOutage },
    )
    if (settled) return settled
    last ??= (await this.getAsk(id, { signal: options.signal })).message
    return { status: 'timeout', answer: null, message: last }
  }

  /** The channel's open questions. */
  async asks(options: CallOptions = {}): Promise<Message[]> {
    return (await this.http.json<{ asks: Message[] }>('GET', '/v1/asks', options)).asks
  }

  /** Withdraws an open question (409 once it is settled). */
  async cancel(id: string, reason?: string, options: CallOptions = {}): Promise<Message> {
    const json = reason === undefined ? {} : { reason }
    const r = await this.write<{ message: Message }>('POST', `/v1/messages/${enc(id)}/cancel`, {
      ...options,
      json,
    })
    return r.message
  }

  /** Edits a message: `title`, `text`, `blocks`, or `block_patches` merged by block id. */
  async edit(id: string, patch: EditRequest, options: CallOptions = {}): Promise<Message> {
    const path = `/v1/messages/${enc(id)}`
    return (await this.write<{ message: Message }>('PATCH', path, { ...options, json: patch }))
      .message
  }

  /** Replaces a message's whole body. */
  async replace(id: string, body: Body, options: CallOptions = {}): Promise<Message> {
    const path = `/v1/messages/${enc(id)}`
    const json = { body: bodyOf(body) }
    return (await this.write<{ message: Message }>('PUT', path, { ...options, json })).message
  }

  async delete(id: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('DELETE', `/v1/messages/${enc(id)}`, options)
  }

  /** Acknowledges a message from the person: `seen`, `working` or `done`. */
  async ack(id: string, state: AckState, options: CallOptions = {}): Promise<Message> {
    const path = `/v1/messages/${enc(id)}/state`
    return (await this.write<{ message: Message }>('POST', path, { ...options, json: { state } }))
      .message
  }

  /** Creates or replaces the pinned message under `key` (letters, digits, `. _ - :`). */
  async pin(key: string, body: Body, options: SendOptions = {}): Promise<Pin> {
    const json = {
      body: bodyOf(body),
      ...(options.silent === undefined ? {} : { silent: options.silent }),
    }
    return (
      await this.write<{ pin: Pin }>('PUT', `/v1/pins/${enc(key, 'key')}`, { ...options, json })
    ).pin
  }

  /** Edits a pin as `edit` edits a message (e.g. `block_patches` on a progress bar). */
  async editPin(key: string, patch: EditRequest, options: CallOptions = {}): Promise<Pin> {
    const path = `/v1/pins/${enc(key, 'key')}`
    return (await this.write<{ pin: Pin }>('PATCH', path, { ...options, json: patch })).pin
  }

  async unpin(key: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('DELETE', `/v1/pins/${enc(key, 'key')}`, options)
  }

  async pins(options: CallOptions = {}): Promise<Pin[]> {
    return (await this.http.json<{ pins: Pin[] }>('GET', '/v1/pins', options)).pins
  }

  /**
   * Uploads a file; its `file_id` goes in an `image` or `file` block. The bytes are held in
   * memory (a Blob, bytes or text) so that a retry can send them again.
   */
  async upload(
    data: Blob | ArrayBuffer | Uint8Array | string,
    options: CallOptions & { name: string; mime?: string },
  ): Promise<FileInfo> {
    const mime =
      options.mime ||
      (typeof Blob !== 'undefined' && data instanceof Blob && data.type) ||
      'application/octet-stream'
    return this.http.json<FileInfo>('POST', '/v1/files', {
      ...options,
      query: { name: options.name },
      body: data,
      headers: { 'content-type': mime },
    })
  }

  /** A file's download (a 2xx `Response`: stream its `body`, or `arrayBuffer()` it). */
  async download(fileId: string, options: CallOptions = {}): Promise<Response> {
    return this.http.request('GET', `/v1/files/${enc(fileId, 'fileId')}`, options)
  }

  /** A file's bytes. */
  async downloadBytes(fileId: string, options: CallOptions = {}): Promise<Uint8Array> {
    return new Uint8Array(await (await this.download(fileId, options)).arrayBuffer())
  }

  /**
   * One read of the change feed: messages created or changed after `since`, each once in its
   * latest form (deleted ones as `{ id, deleted: true }`), and the cursor to read after next.
   */
  feed(options: FeedOptions = {}): Promise<FeedPage> {
    const wait = options.wait === undefined ? undefined : Math.min(MAX_WAIT_SECONDS, options.wait)
    return this.http.json<FeedPage>('GET', '/v1/messages', {
      query: {
        since: options.since ?? 0,
        wait,
        sender: options.sender,
        peek: options.peek ? true : undefined,
        limit: options.limit,
      },
      holdSeconds: wait,
      signal: options.signal,
    })
  }

  /**
   * The person's new messages since `cursor` (which it then moves on), waiting up to `wait`
   * seconds for a first one. Messages the agent already marked `working` or `done` are left
   * out: acknowledging a message changes it, and it would otherwise come back.
   */
  async inbox(options: InboxOptions = {}): Promise<Message[]> {
    const latest = new Map<string, Message | DeletedMessage>()
    let wait = options.wait ?? 0
    for (;;) {
      const page = await this.feed({ ...options, since: this.cursor, sender: 'human', wait })
      for (const m of page.messages) {
        latest.delete(m.id)
        latest.set(m.id, m)
      }
      this.cursor = page.cursor
      if (!page.has_more) break
      wait = 0
    }
    return [...latest.values()].filter(
      (m): m is Message => !isDeleted(m) && m.state !== 'working' && m.state !== 'done',
    )
  }

  /**
   * The person's messages as they come, until `signal` aborts (then it ends without error).
   * Outages are polled through.
   */
  async *messages(
    options: { peek?: boolean; signal?: AbortSignal; onOutage?: (line: string) => void } = {},
  ): AsyncGenerator<Message> {
    const { peek, signal, onOutage } = options
    while (!signal?.aborted) {
      let batch: Message[] | undefined
      try {
        batch = await pollUntil(
          async (wait, s) => {
            const found = await this.inbox({ peek, wait, signal: s })
            return found.length > 0 ? found : undefined
          },
          { deadline: Infinity, signal, onOutage },
        )
      } catch (error) {
        if (signal?.aborted) return
        throw error
      }
      if (batch) yield* batch
    }
  }

  /** The channel (its label as the person sees it, counts) and the keys that sign answers. */
  channel(options: CallOptions = {}): Promise<{ channel: Channel; approvers: unknown }> {
    return this.http.json('GET', '/v1/channel', options)
  }

  /** Renames the agent: its channel's name as the person sees it. */
  rename(label: string, options: CallOptions = {}): Promise<{ agent: { label: string } }> {
    return this.write('PATCH', '/v1/agent', { ...options, json: { label } })
  }

  /** Whether the server is up; needs no token. */
  health(options: CallOptions = {}): Promise<{ ok: boolean }> {
    return this.http.json('GET', '/health', options)
  }

  /** The server's name, version, public URL and features; needs no token. */
  info(options: CallOptions = {}): Promise<ServerInfo> {
    return this.http.json('GET', '/v1/info', options)
  }
}
