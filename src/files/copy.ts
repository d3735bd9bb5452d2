import { FatalError } from '../core/errors.ts'
import type { BlobStore } from './blobs.ts'
import type { FileSum } from './store.ts'

/**
 * Copies files' bytes from one store to another (`hark admin migrate-to --s3-url`: from the
 * data directory into the bucket), each checked on the way in against its record's size and
 * SHA-256, a few at a time. A key is written once and never changed, so running it again only
 * writes the same bytes again.
 */

/** Reported as its message alone: which file, and what was wrong with it. */
export class FileCopyError extends FatalError {}

/** Objects in flight at once: enough to hide a round trip, few enough for a Pi's memory. */
const PARALLEL = 4

export async function copyFiles(
  files: readonly FileSum[],
  from: BlobStore,
  to: BlobStore,
): Promise<{ files: number; bytes: number }> {
  let next = 0
  let bytes = 0
  const worker = async () => {
    for (let i = next++; i < files.length; i = next++) {
      const f = files[i] as FileSum
      const key = `${f.channel_id}/${f.id}`
      const blob = await from.get(key)
      if (blob === undefined)
        throw new FileCopyError(`${key}: its bytes are missing in ${from.where}`)
      const body = blob instanceof Blob ? blob.stream() : blob
      const stored = await to
        .put(key, body, {
          maxBytes: f.size,
          tooLarge: (size) => new Error(`${size} bytes where the record says ${f.size}`),
          sha256: f.sha256,
        })
        .catch((error: Error) => {
          throw new FileCopyError(`${key}: ${error.message.replace(`${key}: `, '')}`)
        })
      if (stored.size !== f.size) {
        throw new FileCopyError(`${key}: ${stored.size} bytes where the record says ${f.size}`)
      }
      bytes += stored.size
    }
  }
  await Promise.all(Array.from({ length: Math.min(PARALLEL, files.length) }, worker))
  return { files: files.length, bytes }
}
