import type { ImageContent, TextContent } from '@modelcontextprotocol/sdk/types.js'
import { type AgentClient, HarkError } from '../../agent/client.ts'
import { describeFailure } from '../../agent/failures.ts'

/**
 * Images in a tool's result as MCP image content: a screenshot the person sent is only useful to
 * a model that can see it, and a file_id in JSON is not seen. Each is bounded (a photo from a
 * phone can be large, and the whole result sits in the model's context); one that cannot be
 * included is said in a text note instead, so the model knows it is there.
 */
export const MAX_IMAGE_BYTES = 2 * 1024 * 1024
/** Beyond this many, the rest are only noted: a long inbox must not flood the context. */
export const MAX_IMAGES = 8

interface ImageRef {
  file_id: string
  name?: string
}

/** Every `{ type: 'image', file_id }` in a result (blocks of messages, answers), each once. */
export function imageRefs(value: unknown, found = new Map<string, ImageRef>()): ImageRef[] {
  if (Array.isArray(value)) {
    for (const item of value) imageRefs(item, found)
  } else if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    if (record.type === 'image' && typeof record.file_id === 'string') {
      const name = typeof record.name === 'string' ? record.name : undefined
      if (!found.has(record.file_id)) found.set(record.file_id, { file_id: record.file_id, name })
    }
    for (const item of Object.values(record)) imageRefs(item, found)
  }
  return [...found.values()]
}

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`

/** The body, or undefined once it passes `limit` bytes (the rest is not downloaded). */
async function readBounded(response: Response, limit: number): Promise<Uint8Array | undefined> {
  const reader = response.body?.getReader()
  if (!reader) return new Uint8Array()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel()
      return undefined
    }
    chunks.push(value)
  }
  return Buffer.concat(chunks)
}

async function imageContent(
  client: AgentClient,
  ref: ImageRef,
): Promise<ImageContent | TextContent> {
  const what = `image ${ref.file_id}${ref.name ? ` (${ref.name})` : ''}`
  const note = (why: string): TextContent => ({
    type: 'text',
    text: `${what} not included: ${why}`,
  })
  try {
    let response: Response
    try {
      response = await client.download(ref.file_id)
    } catch (error) {
      if (!(error instanceof HarkError) || error.kind !== 'http') throw error
      return note(`the server answered ${error.status}`)
    }
    const mimeType = (response.headers.get('content-type') ?? '').split(';')[0]?.trim() ?? ''
    if (!mimeType.startsWith('image/')) {
      await response.body?.cancel()
      return note(`it is ${mimeType || 'of no media type'}, not an image`)
    }
    const length = Number(response.headers.get('content-length'))
    if (length > MAX_IMAGE_BYTES) {
      await response.body?.cancel()
      return note(`${mib(length)} is over the ${mib(MAX_IMAGE_BYTES)} limit`)
    }
    const bytes = await readBounded(response, MAX_IMAGE_BYTES)
    if (!bytes) return note(`it is over the ${mib(MAX_IMAGE_BYTES)} limit`)
    return { type: 'image', data: Buffer.from(bytes).toString('base64'), mimeType }
  } catch (error) {
    return note(describeFailure(error).message)
  }
}

/** The content items for the images a result carries (none: an empty list). */
export async function imagesOf(
  client: AgentClient,
  result: unknown,
): Promise<(ImageContent | TextContent)[]> {
  const refs = imageRefs(result)
  const shown = await Promise.all(refs.slice(0, MAX_IMAGES).map((r) => imageContent(client, r)))
  const rest = refs.slice(MAX_IMAGES)
  if (rest.length === 0) return shown
  const ids = rest.map((r) => r.file_id).join(', ')
  return [...shown, { type: 'text', text: `${rest.length} more images not included: ${ids}` }]
}
