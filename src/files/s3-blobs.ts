import { S3Client } from 'bun'
import { randomBase62 } from '../core/ids.ts'
import {
  type BlobStore,
  BlobStoreError,
  type ByteRange,
  checkKey,
  type PutOptions,
  type Stored,
  streamChecked,
} from './blobs.ts'
import { describeS3, type S3Location } from './s3-url.ts'

/** How long the start-up probe may take: an endpoint that never answers must not hang start. */
const CHECK_MS = 15_000

const codeOf = (error: unknown) => (error as { code?: string }).code

/**
 * Files in an S3 bucket (Bun's own client), each object at `<prefix><channel>/<file>`. An
 * upload streams to its final key; the size and hash are checked as it streams, and a failure
 * (too large, wrong hash, cut connection) errors the stream, so S3 never completes the object
 * (and a delete follows, in case it did). Downloads are read back through Hark, never
 * redirected to the bucket: Hark's headers and access checks stay in front of every byte.
 */
export class S3Blobs implements BlobStore {
  readonly where: string
  private readonly client: S3Client

  constructor(private readonly location: S3Location) {
    this.where = describeS3(location)
    this.client = new S3Client({
      endpoint: location.endpoint,
      bucket: location.bucket,
      region: location.region,
      ...(location.accessKeyId && {
        accessKeyId: location.accessKeyId,
        secretAccessKey: location.secretAccessKey,
      }),
    })
  }

  private file = (key: string) => this.client.file(this.location.prefix + checkKey(key))

  async put(
    key: string,
    body: AsyncIterable<Uint8Array> | null,
    options: PutOptions,
  ): Promise<Stored> {
    const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>()
    const writer = writable.getWriter()
    const feeding = streamChecked(key, body, options, (chunk) => writer.write(chunk)).then(
      async (stored) => {
        await writer.close()
        return stored
      },
      async (error) => {
        // Erroring the stream fails the upload: S3 never makes an object of part of a body.
        await writer.abort(error).catch(() => {})
        throw error
      },
    )
    const upload = this.file(key)
      .write(new Response(readable))
      .catch(async (error) => {
        // The bucket refused: stop reading the body too (a blocked write would wait forever).
        await writer.abort(error).catch(() => {})
        throw error
      })
    const [fed, sent] = await Promise.allSettled([feeding, upload])
    if (fed.status === 'fulfilled' && sent.status === 'fulfilled') return fed.value
    await this.delete(key).catch(() => {})
    if (fed.status === 'rejected') throw fed.reason
    const reason = sent.status === 'rejected' ? sent.reason : undefined
    throw new Error(`S3 refused ${key}: ${codeOf(reason) ?? ''} ${reason}`)
  }

  async get(key: string, range?: ByteRange) {
    const file = this.file(key)
    try {
      // A missing object is known before the answer starts, not as a broken body halfway.
      await file.stat()
    } catch (error) {
      if (codeOf(error) === 'NoSuchKey') return undefined
      throw error
    }
    return (range ? file.slice(range.start, range.end) : file).stream()
  }

  async delete(key: string): Promise<void> {
    await this.file(key).delete()
  }

  async deletePrefix(prefix: string): Promise<void> {
    if (!/^[A-Za-z0-9_-]{1,64}\/$/.test(prefix)) throw new Error(`not a channel prefix: ${prefix}`)
    for await (const key of this.keys(prefix)) await this.delete(key)
  }

  list(before?: number): AsyncIterable<string> {
    return this.keys('', before)
  }

  /** Keys under `prefix` (relative to the configured prefix), page by page. */
  private async *keys(prefix: string, before?: number): AsyncIterable<string> {
    let continuationToken: string | undefined
    do {
      const page = await this.client.list({
        prefix: this.location.prefix + prefix,
        ...(continuationToken && { continuationToken }),
      })
      for (const o of page.contents ?? []) {
        const key = o.key.slice(this.location.prefix.length)
        if (before !== undefined && !(Date.parse(String(o.lastModified)) < before)) continue
        // Only Hark's own keys: anything else sharing the prefix is not ours to sweep.
        if (/^[A-Za-z0-9_-]{1,64}\/[A-Za-z0-9_-]{1,64}$/.test(key)) yield key
      }
      continuationToken = page.isTruncated ? page.nextContinuationToken : undefined
    } while (continuationToken)
  }

  /** Nothing: a cut upload never becomes an object (a bucket lifecycle rule drops its parts). */
  async dropPartial(): Promise<void> {}

  /** Writes, reads back and deletes a probe object: reachable, the bucket exists, the key may. */
  async check(): Promise<void> {
    const probe = this.client.file(`${this.location.prefix}.hark-check-${randomBase62(12)}`)
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${CHECK_MS / 1000} s`)), CHECK_MS)
    })
    try {
      await Promise.race([
        (async () => {
          await probe.write('hark')
          if ((await probe.text()) !== 'hark') throw new Error('the probe object read back wrong')
          await probe.delete()
        })(),
        timeout,
      ])
    } catch (error) {
      const code = codeOf(error)
      throw new BlobStoreError(
        `cannot use the S3 bucket "${this.location.bucket}" at ${this.location.endpoint} ` +
          `(--s3-url / HARK_S3_URL): ${code ? `${code}: ` : ''}${(error as Error).message}`,
      )
    } finally {
      clearTimeout(timer)
    }
  }
}
