import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { open, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { ChannelRow } from '../channels/store.ts'
import { fail } from '../core/errors.ts'
import { stallGuarded } from '../core/http/stalls.ts'
import { newId, randomBase62 } from '../core/ids.ts'
import { LIMITS } from '../messages/limits.ts'
import type { Ctx } from '../server/context.ts'
import type { FileInfo } from './schema.ts'
import type { FileRow } from './store.ts'

/** Where a stored file lives: `files/<channel>/<file>`, so a channel's files go with it. */
export const filePath = (filesDir: string, row: Pick<FileRow, 'channel_id' | 'id'>) =>
  join(filesDir, row.channel_id, row.id)

const tmpDir = (filesDir: string) => join(filesDir, '.tmp')

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
function checkQuota(ctx: Ctx, channel: ChannelRow, incoming: number): number {
  const usage = ctx.store.files.usage(channel.id)
  if (usage.files >= LIMITS.filesPerChannel) throw tooManyFiles()
  if (usage.bytes + incoming > LIMITS.channelStorageBytes) throw overQuota(usage.bytes)
  const personBytes = ctx.store.files.personBytes(channel.user_id)
  if (personBytes + incoming > LIMITS.personStorageBytes) throw overPersonQuota(personBytes)
  return Math.min(LIMITS.channelStorageBytes - usage.bytes, LIMITS.personStorageBytes - personBytes)
}

/**
 * Streams an upload to a temporary file, counting bytes as they come: past the limit (the
 * file size limit, or what is left of the channel's storage) the upload is cut, the partial
 * file removed and 413 returned. A complete file is synced, moved into place, and only then
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
  onRecord?: (info: FileInfo, sha256: string) => void,
): Promise<FileInfo> {
  const name = cleanName(input.name)
  const mime = cleanMime(input.contentType)
  const limit = ctx.config.maxFileSize
  const declared = input.contentLength === null ? 0 : Number(input.contentLength) || 0
  if (declared > limit) {
    throw fail.tooLarge(`file is larger than the ${limit}-byte limit`)
  }
  const room = checkQuota(ctx, channel, declared)
  const id = newId('file')
  const tmp = join(tmpDir(ctx.filesDir), `${id}.${randomBase62(6)}`)
  const hash = createHash('sha256')
  let size = 0
  const handle = await open(tmp, 'wx', 0o600)
  try {
    if (input.body) {
      for await (const chunk of stallGuarded(input.body, ctx.config.uploadStallMs)) {
        size += chunk.byteLength
        if (size > limit) throw fail.tooLarge(`file is larger than the ${limit}-byte limit`)
        if (size > room) {
          // Checking again names the quota the upload went past: the channel's or the person's.
          checkQuota(ctx, channel, size)
          throw overQuota(LIMITS.channelStorageBytes - room)
        }
        hash.update(chunk)
        await handle.write(chunk)
      }
    }
    await handle.sync()
  } catch (error) {
    await handle.close()
    await rm(tmp, { force: true })
    throw error
  }
  await handle.close()
  const row: FileRow = {
    id,
    channel_id: channel.id,
    name,
    mime,
    size,
    sha256: hash.digest('hex'),
    created_at: ctx.clock.now(),
  }
  const dest = filePath(ctx.filesDir, row)
  mkdirSync(join(ctx.filesDir, channel.id), { recursive: true, mode: 0o700 })
  try {
    await rename(tmp, dest)
    await ctx.writes.run(() => {
      checkQuota(ctx, channel, size)
      ctx.store.files.insert(row)
      onRecord?.(toFileInfo(row), row.sha256)
    })
  } catch (error) {
    await rm(tmp, { force: true })
    await rm(dest, { force: true })
    throw error
  }
  return toFileInfo(row)
}

export function findFile(ctx: Ctx, channel: ChannelRow, id: string): FileRow {
  const row = ctx.store.files.inChannel(id, channel.id)
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
 * A download. `nosniff` and a sandboxing CSP keep an uploaded file from ever running as a page
 * of the app's origin; only safe types are shown inline.
 */
export function downloadResponse(ctx: Ctx, row: FileRow): Response {
  const inline = INLINE.has(row.mime)
  const encoded = rfc8187(row.name)
  const ascii = row.name.replace(/[^\x20-\x7e]|["\\]/g, '_')
  return new Response(Bun.file(filePath(ctx.filesDir, row)), {
    headers: {
      'content-type': inline ? row.mime : 'application/octet-stream',
      'content-length': String(row.size),
      'content-disposition': `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encoded}`,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      'cache-control': 'private, max-age=31536000, immutable',
      etag: `"${row.sha256}"`,
    },
  })
}

/** At start: clears half-written uploads and files no record points to (a crash mid-upload). */
export function sweepFiles(ctx: Ctx): void {
  rmSync(tmpDir(ctx.filesDir), { recursive: true, force: true })
  mkdirSync(tmpDir(ctx.filesDir), { recursive: true, mode: 0o700 })
  const known = new Set(ctx.store.files.allIds().map((f) => `${f.channel_id}/${f.id}`))
  for (const dir of readdirSync(ctx.filesDir, { withFileTypes: true })) {
    if (!dir.isDirectory() || dir.name === '.tmp') continue
    for (const file of readdirSync(join(ctx.filesDir, dir.name))) {
      if (!known.has(`${dir.name}/${file}`)) {
        rmSync(join(ctx.filesDir, dir.name, file), { force: true })
        ctx.log.warn(`removed orphan file ${dir.name}/${file}`)
      }
    }
  }
}
