import { errorResponse } from './errors.ts'

/** Largest JSON request body: the biggest legitimate one (a 256 KiB message) with room. */
export const JSON_BODY_LIMIT = 1024 * 1024

/** The unread body is abandoned: the connection cannot be reused for another request. */
const CLOSE = { connection: 'close' }

/** The routes that take raw file bytes, streamed to disk under the upload limit instead. */
const UPLOAD = /^\/v1\/(?:files|app\/channels\/[^/]+\/files)$/

/**
 * Refuses an oversized body before anything reads it. Elysia parses a JSON body before the
 * auth guard runs, and Bun's own cap is the upload size (25 MiB): without this, a stranger
 * could make the server buffer 25 MiB per request. A body of unknown length (chunked) is only
 * accepted on the upload routes, which count bytes as they stream.
 */
export function refuseOversizedBody(request: Request): Response | undefined {
  if (request.method === 'GET' || request.method === 'HEAD') return undefined
  const path = request.url.slice(request.url.indexOf('/', 8)).split('?')[0] as string
  if (UPLOAD.test(path)) return undefined
  const length = request.headers.get('content-length')
  if (length === null) {
    if (!request.headers.get('transfer-encoding')) return undefined
    return errorResponse(411, 'a JSON body needs a Content-Length header', undefined, CLOSE)
  }
  if (Number(length) > JSON_BODY_LIMIT) {
    return errorResponse(
      413,
      `request body is larger than ${JSON_BODY_LIMIT} bytes`,
      undefined,
      CLOSE,
    )
  }
  return undefined
}
