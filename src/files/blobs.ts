import { createHash } from 'node:crypto'
import { FatalError } from '../core/errors.ts'

/**
 * The seam between the files service and where the bytes live: a directory (disk-blobs.ts,
 * the default) or an S3 bucket (s3-blobs.ts, `--s3-url`). Keys are `<channel>/<file>`, so a
 * channel's files share a prefix and go with it. Records stay in SQLite (files/store.ts); a
 * store only holds bytes, and a key is written once and never changed.
 */
export interface BlobStore {
  /** What the store is, for logs and errors (never a secret). */
  readonly where: string
  /**
   * Streams `body` to `key`, counting and hashing as it goes. Past `maxBytes` the write is cut
   * and `tooLarge(size)` thrown; with `sha256` the bytes must hash to it. Any failure leaves
   * nothing at `key`; success means the whole object is there (on disk: synced).
   */
  put(key: string, body: AsyncIterable<Uint8Array> | null, options: PutOptions): Promise<Stored>
  /**
   * The bytes of `key` (only `range`'s when given: `end` exclusive, within the object), or
   * undefined when there is no such object.
   */
  get(key: string, range?: ByteRange): Promise<Blob | ReadableStream<Uint8Array> | undefined>
  /** Removes one object; no error when it is already gone. */
  delete(key: string): Promise<void>
  /** Removes every object under `prefix` (a channel's files: `<channel>/`). */
  deletePrefix(prefix: string): Promise<void>
  /**
   * Every key held, for the orphan sweep at start; only those last written before `before`
   * (ms since the epoch) when given (another instance's upload may be about to be recorded).
   */
  list(before?: number): AsyncIterable<string>
  /** Clears what a crash left half-written (the disk's temporary directory), at start. */
  dropPartial(): Promise<void>
  /** Proves the store is there and writable; throws a `BlobStoreError` saying why not. */
  check(): Promise<void>
}

export interface PutOptions {
  maxBytes: number
  tooLarge: (size: number) => Error
  /** The SHA-256 (hex) the bytes must have, when the caller knows it. */
  sha256?: string
}

export interface Stored {
  size: number
  sha256: string
}

export interface ByteRange {
  start: number
  /** Exclusive. */
  end: number
}

/** The store cannot be used at all (unreachable, refused, not writable): fatal at start. */
export class BlobStoreError extends FatalError {}

/** The bytes did not hash to what the caller expected: nothing was kept. */
export class BlobMismatchError extends Error {
  constructor(key: string) {
    super(`${key}: the bytes do not match the expected SHA-256`)
  }
}

/** Keys are ids joined by `/`: nothing else reaches a path or an object name. */
const KEY = /^[A-Za-z0-9_-]{1,64}\/[A-Za-z0-9_-]{1,64}$/

export function checkKey(key: string): string {
  if (!KEY.test(key)) throw new Error(`not a file key: ${JSON.stringify(key)}`)
  return key
}

/**
 * Counts and hashes a body as it is written through `write`, cutting it past the limit. Both
 * stores share it, so the size and hash checks are the same whatever holds the bytes.
 */
export async function streamChecked(
  key: string,
  body: AsyncIterable<Uint8Array> | null,
  options: PutOptions,
  write: (chunk: Uint8Array) => Promise<unknown> | unknown,
): Promise<Stored> {
  const hash = createHash('sha256')
  let size = 0
  if (body) {
    for await (const chunk of body) {
      size += chunk.byteLength
      if (size > options.maxBytes) throw options.tooLarge(size)
      hash.update(chunk)
      await write(chunk)
    }
  }
  const sha256 = hash.digest('hex')
  if (options.sha256 !== undefined && options.sha256 !== sha256) throw new BlobMismatchError(key)
  return { size, sha256 }
}

/** What this domain adds to the services' context (built in server/context.ts). */
declare module '../core/context.ts' {
  interface Ctx {
    filesDir: string
    /** Where files' bytes live: `filesDir` (default) or an S3 bucket (`--s3-url`). */
    blobs: BlobStore
    /** Settles once the start-up sweep of orphan files is done; uploads wait for it. */
    filesSwept: Promise<void>
  }
}
