import { createHash } from 'node:crypto'
import { fail, HarkError } from '../../core/errors.ts'
import { canonicalJson } from '../../shared/canonical.ts'

/** The request header a client names a logical write with (draft-ietf-httpapi-idempotency-key). */
export const KEY_HEADER = 'Idempotency-Key'
/** Set on an answer given again to a retry, so a client can tell (Stripe's name for it). */
export const REPLAYED_HEADER = 'Idempotent-Replayed'
/** How long a key answers for its first write: a day covers any client's retries. */
export const KEY_TTL_MS = 24 * 60 * 60 * 1000
/** Expired keys are swept by a keyed write at most this often, not on every one. */
export const SWEEP_EVERY_MS = 60 * 1000

/** 1–255 printable ASCII characters: what fits any client's header and any log line. */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/

/**
 * The request's `Idempotency-Key`, or undefined when it sends none (the common case costs one
 * header read). Anything but 1–255 printable ASCII characters is 400 naming the header: a
 * client that meant to make its write safe must hear that it did not.
 */
export function keyOf(request: Request): string | undefined {
  const key = request.headers.get(KEY_HEADER)
  if (key === null) return undefined
  if (!KEY_PATTERN.test(key)) {
    throw fail.invalid(KEY_HEADER, 'must be 1 to 255 printable ASCII characters')
  }
  return key
}

export const keyConflict = () =>
  new HarkError(
    409,
    'was already used for a different request in the last 24 h; send a new key for a new write',
    KEY_HEADER,
  )

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** `/v1/files?name=a.txt`: what the request names, as sent (a retry sends the same URL). */
function target(request: Request): string {
  const url = new URL(request.url)
  return `${url.pathname}${url.search}`
}

/**
 * What "the same request" means for a JSON write: its method, path and query, and its body as
 * a value (canonical JSON: a retry that orders keys or spaces differently is still the same).
 */
export const jsonRequestHash = (request: Request, body: unknown) =>
  sha256(`${request.method} ${target(request)}\n${canonicalJson(body ?? null)}`)

/**
 * The same for an upload, whose body is bytes: their SHA-256 stands for them, and the type they
 * are stored under is part of the request.
 */
export const uploadRequestHash = (request: Request, bytesSha256: string) =>
  sha256(
    `${request.method} ${target(request)}\n${request.headers.get('content-type') ?? ''}\n${bytesSha256}`,
  )

/**
 * The keyed writes under way and when expired keys were last swept, one per context. A write
 * whose service awaits (an upload streaming to disk) holds its key here until it ends, and a
 * second request with the same key waits for it instead of writing too.
 */
export class KeyedWrites {
  private readonly running = new Map<string, Promise<void>>()
  sweptAt = Number.NEGATIVE_INFINITY

  /** Settles when the write holding `id` ends; undefined when none does. */
  busy(id: string): Promise<void> | undefined {
    return this.running.get(id)
  }

  /** Marks `id` as being written; the returned function ends it and wakes who waits. */
  hold(id: string): () => void {
    let release!: () => void
    const ended = new Promise<void>((resolve) => {
      release = resolve
    })
    this.running.set(id, ended)
    return () => {
      if (this.running.get(id) === ended) this.running.delete(id)
      release()
    }
  }
}

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../../core/context.ts' {
  interface Ctx {
    /** Keyed writes under way (`Idempotency-Key`) and when expired keys were last swept. */
    idempotency: KeyedWrites
  }
}
