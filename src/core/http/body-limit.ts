import { errorResponse } from '../errors.ts'
import { pathOf } from './front-door.ts'
import { isUploadPath } from './json-body.ts'

/**
 * Largest JSON request body: the biggest legitimate one (a message's 256 KiB `body`, sent as
 * compact JSON) with room for the rest of the request. No more: parsing and refusing the worst
 * body of this size costs a few milliseconds of the one thread every request shares
 * (bench/hostile.ts), and four times as much at 1 MiB.
 */
export const JSON_BODY_LIMIT = 320 * 1024

/** Room over the largest file for what an upload's length may count besides it. */
const UPLOAD_SLACK = 64 * 1024

/** The unread body is abandoned: the connection cannot be reused for another request. */
const CLOSE = { connection: 'close' }

/**
 * Refuses an oversized body before anything reads it, with a JSON answer (Bun's own cap, set
 * far above, would answer 413 with an empty body). Elysia parses a JSON body before the auth
 * guard runs: without this, a stranger could make the server buffer a large body per request.
 * A body of unknown length (chunked) is only accepted on the upload routes, which count bytes as
 * they stream and stop at their limit.
 */
export function refuseOversizedBody(request: Request, maxUpload: number): Response | undefined {
  if (request.method === 'GET' || request.method === 'HEAD') return undefined
  const upload = isUploadPath(pathOf(request.url))
  const length = request.headers.get('content-length')
  if (length === null) {
    if (upload || !request.headers.get('transfer-encoding')) return undefined
    return errorResponse(411, 'a JSON body needs a Content-Length header', undefined, CLOSE)
  }
  const limit = upload ? maxUpload + UPLOAD_SLACK : JSON_BODY_LIMIT
  if (Number(length) > limit) {
    const what = upload ? `the upload limit (${maxUpload} bytes)` : `${JSON_BODY_LIMIT} bytes`
    return errorResponse(413, `request body is larger than ${what}`, undefined, CLOSE)
  }
  return undefined
}
