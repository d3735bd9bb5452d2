import type { ChannelRow } from '../channels/store.ts'
import type { Ctx, Tx } from '../core/context.ts'
import { fail } from '../core/errors.ts'
import { stallGuarded } from '../core/http/stalls.ts'
import { newId } from '../core/ids.ts'
import { LIMITS } from '../messages/limits.ts'
import { type RangeAnswer, rangeOf } from './range.ts'
import type { FileInfo } from './schema.ts'
import type { FileRow } from './store.ts'

/** A file's key in the blob store: `<channel>/<file>`, so a channel's files go with it. */
export const fileKey = (row: Pick<FileRow, 'channel_id' | 'id'>) => `${row.channel_id}/${row.id}`

export const toFileInfo = (f: FileRow): FileInfo => ({
  file_id: f.id,
  name: f.name,
  mime: f.mime,
  size: f.size,
  created_at: f.created_at,
})

const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/

export function cleanName(raw: string | undefined): string {
  // Path separators and control characters never reach the disk (ids do) nor the headers.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters
  const name = (raw ?? '').replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim()
  if (name === '') throw fail.invalid('name', 'is required (the file name, as ?name=)')
  if (name.length > 255) throw fail.invalid('name', 'must be at most 255 characters')
  return name
}

export function cleanMime(raw: string | null): string {
  const mime = (raw ?? '').split(';')[0]?.trim().toLowerCase() || 'application/octet-stream'
  if (!MIME.test(mime)) throw fail.invalid('content-type', 'is not a valid media type')
  return mime
}

const tooManyFiles = () =>
  fail.conflict(
    `this channel holds ${LIMITS.filesPerChannel} files, the most it can; ` +
      'files cannot be added past that',
  )
const overQuota = (used: number) =>
  fail.tooLarge(
    `the channel's files would exceed its ${LIMITS.channelStorageBytes}-byte storage ` +
      `(${used} bytes used)`,
  )

const overPersonQuota = (used: number) =>
  fail.tooLarge(
    `your files in all your channels would exceed ${LIMITS.personStorageBytes} bytes ` +
      `(${used} bytes used)`,
  )

/**
 * The channel's quota and its person's, checked before the bytes are read (409 when the channel
 * holds the most files, 413 when a declared length would not fit) and again when the upload is
 * recorded, in the same transaction, so concurrent uploads cannot overshoot them together.
 * Returns the bytes that may still be taken.
 */
async function checkQuota(
  reader: Pick<Tx, 'store'>,
  channel: ChannelRow,
  incoming: number,
): Promise<Usage> {
  const usage = await reader.store.files.usage(channel.id)
  const personBytes = await reader.store.files.personBytes(channel.user_id)
  const taken = { channel: usage, personBytes }
  const over = quotaError(taken, incoming)
  if (over) throw over
  return taken
}

interface Usage {
  channel: { files: number; bytes: number }
  personBytes: number
}

/** What `incoming` more bytes would go past, if anything: the channel's quota or the person's. */
function quotaError(usage: Usage, incoming: number): Error | undefined {
  if (usage.channel.files >= LIMITS.filesPerChannel) return tooManyFiles()
  if (usage.channel.bytes + incoming > LIMITS.channelStorageBytes) {
    return overQuota(usage.channel.bytes)
  }
  if (usage.personBytes + incoming > LIMITS.personStorageBytes) {
    return overPersonQuota(usage.personBytes)
  }
  return undefined
}

/**
 * Streams an upload to the blob store, counting bytes as they come: past the limit (the file
 * size limit, or what is left of the channel's storage) the upload is cut, nothing kept and 413
 * returned. A complete file is stored (on disk: synced and renamed into place) and only then
 * recorded, so a crash leaves at worst an orphan (swept at start). `onRecord` runs inside the
 * transaction that records it, with the answer and the bytes' SHA-256: what it writes (an
 * idempotency key's answer) commits with the file or not at all, and if it throws, no file.
 */
export async function saveUpload(
  ctx: Ctx,
  channel: ChannelRow,
  input: {
    name: string | undefined
    contentType: string | null
    contentLength: string | null
    body: ReadableStream<Uint8Array> | null
  },
  onRecord?: (tx: Tx, info: FileInfo, sha256: string) => Promise<void>,
): Promise<FileInfo> {
  const name = cleanName(input.name)
  const mime = cleanMime(input.contentType)
  const limit = ctx.config.maxFileSize
  const declared = input.contentLength === null ? 0 : Number(input.contentLength) || 0
  if (declared > limit) {
    throw fail.tooLarge(`file is larger than the ${limit}-byte limit`)
  }
  const usage = await checkQuota(ctx, channel, declared)
  const room = Math.min(
    LIMITS.channelStorageBytes - usage.channel.bytes,
    LIMITS.personStorageBytes - usage.personBytes,
  )
  // The start-up sweep deletes keys no record names: no upload may land while it runs.
  await ctx.filesSwept
  const id = newId('file')
  const key = fileKey({ channel_id: channel.id, id })
  const { size, sha256 } = await ctx.blobs.put(
    key,
    input.body && stallGuarded(input.body, ctx.config.uploadStallMs),
    {
      maxBytes: Math.min(limit, room),
      tooLarge: (got) => {
        if (got > limit) return fail.tooLarge(`file is larger than the ${limit}-byte limit`)
        // Names the quota the upload went past, the channel's or the person's (as read before
        // the bytes: no store is read while they stream).
        return quotaError(usage, got) ?? overQuota(LIMITS.channelStorageBytes - room)
      },
    },
  )
  const row: FileRow = {
    id,
    channel_id: channel.id,
    name,
    mime,
    size,
    sha256,
    created_at: ctx.clock.now(),
  }
  try {
    // The bytes are stored already: the unit only checks the quota again and records them.
    await ctx.writes.run(async (tx) => {
      await checkQuota(tx, channel, size)
      await tx.store.files.insert(row)
      await onRecord?.(tx, toFileInfo(row), row.sha256)
    })
  } catch (error) {
    // Not recorded: the bytes go (or, if even that fails, the next start's sweep takes them).
    await ctx.blobs.delete(key).catch(() => {})
    throw error
  }
  return toFileInfo(row)
}

export async function findFile(ctx: Ctx, channel: ChannelRow, id: string): Promise<FileRow> {
  const row = await ctx.store.files.inChannel(id, channel.id)
  if (!row) throw fail.notFound('file')
  return row
}

/** Types a browser may show inline; everything else downloads as an attachment. */
const INLINE = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/avif',
  'text/plain',
  'application/pdf',
])

/**
 * RFC 8187 `ext-value` encoding for `filename*`: `encodeURIComponent` leaves `' ( ) *` as they
 * are, but they are not `attr-char`s, and a strict parser would cut the name at the `'`.
 */
const rfc8187 = (name: string) =>
  encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )

/**
 * A download, whole or one byte range of it (`Range: bytes=...`, 206; 416 when outside the
 * file). `nosniff` and a sandboxing CSP keep an uploaded file from ever running as a page of
 * the app's origin; only safe types are shown inline. The bytes come through Hark from
 * whichever store holds them, so these headers are on every download.
 */
export async function downloadResponse(
  ctx: Ctx,
  row: FileRow,
  headers?: Headers,
): Promise<Response> {
  const inline = INLINE.has(row.mime)
  const encoded = rfc8187(row.name)
  const ascii = row.name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  const etag = `"${row.sha256}"`
  const range: RangeAnswer = rangeOf(
    headers?.get('range'),
    headers?.get('if-range'),
    etag,
    row.size,
  )
  const common = {
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'; sandbox",
    'accept-ranges': 'bytes',
    etag,
  }
  if (range.kind === 'unsatisfiable') {
    return new Response(JSON.stringify({ error: 'the range is outside the file' }), {
      status: 416,
      headers: {
        ...common,
        'content-type': 'application/json; charset=utf-8',
        'content-range': `bytes */${row.size}`,
      },
    })
  }
  const part = range.kind === 'partial' ? range : undefined
  const body = await ctx.blobs.get(fileKey(row), part)
  if (body === undefined) {
    ctx.log.error(`file ${fileKey(row)} is recorded but not in ${ctx.blobs.where}`)
    throw fail.notFound('file')
  }
  return new Response(body, {
    status: part ? 206 : 200,
    headers: {
      ...common,
      'content-type': inline ? row.mime : 'application/octet-stream',
      'content-length': String(part ? part.end - part.start : row.size),
      ...(part && { 'content-range': `bytes ${part.start}-${part.end - 1}/${row.size}` }),
      'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encoded}`,
      'cache-control': 'private, max-age=31536000, immutable',
    },
  })
}

/**
 * At start: clears half-written uploads and removes stored files no record points to (a crash
 * between storing and recording). Uploads wait for it (`ctx.filesSwept`): one landing while the
 * keys are listed would look like an orphan.
 */
export async function sweepFiles(ctx: Ctx, options: { minAgeMs?: number } = {}): Promise<void> {
  // Alone on the files (embedded): whatever a crash left half-written goes. Shared with other
  // instances (minAgeMs): their uploads may be streaming or about to be recorded right now, so
  // only keys older than that are candidates, read before the records that would name them.
  const before = options.minAgeMs === undefined ? undefined : ctx.clock.now() - options.minAgeMs
  if (before === undefined) await ctx.blobs.dropPartial()
  const candidates: string[] = []
  for await (const key of ctx.blobs.list(before)) candidates.push(key)
  const known = new Set((await ctx.store.files.allIds()).map((f) => fileKey(f)))
  for (const key of candidates) {
    if (!known.has(key)) {
      await ctx.blobs.delete(key)
      ctx.log.warn(`removed orphan file ${key}`)
    }
  }
}
