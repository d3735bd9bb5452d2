import { HarkError } from '../errors.ts'
import { pathOf } from './front-door.ts'

/**
 * The one parser of every JSON request body, run by Elysia before validation (`onParse`, global).
 *
 * Everything after it — Elysia's validation and its error, block checks, answer checks — walks
 * the value recursively, so a body is refused here, in time linear in its size, before any of
 * that work: when it is not JSON, is not UTF-8, nests deeper than `MAX_JSON_DEPTH`, is built of
 * more containers or members than allowed, or holds a string that is not well-formed Unicode (a
 * lone surrogate escape would be stored as U+FFFD). The size is capped earlier, before a byte is read (`body-limit.ts`). No refusal ever repeats the
 * received value: its message says what is wrong, never what was sent.
 */

/** Deepest nesting of arrays and objects; real bodies (blocks, tables, answers) stay under 8. */
export const MAX_JSON_DEPTH = 32

/**
 * Most arrays and objects in one body, and most members of its objects together. A message at
 * its limits (100 blocks of 50 options, a 5,000-row table) stays well under both; a body built
 * of tens of thousands of tiny containers or keys is what makes parsing it slow.
 */
export const MAX_JSON_CONTAINERS = 20_000
export const MAX_JSON_MEMBERS = 20_000

/** What a route that takes raw bytes (an upload) gets as its "parsed" body: nothing was read. */
export const RAW_BODY = Object.freeze({})

/** The routes that take raw file bytes, streamed to disk under the upload limit instead. */
const UPLOAD = /^\/v1\/(?:files|app\/channels\/[^/]+\/files)$/

export const isUploadPath = (path: string): boolean => UPLOAD.test(path)

/** A refused body. Elysia wraps it in its ParseError; `renderError` answers it after auth. */
export class BodyError extends HarkError {}

const utf8 = new TextDecoder('utf-8', { fatal: true })

/** `application/json`, `application/json; charset=utf-8`, `application/merge-patch+json`. */
const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json$/i

/**
 * Elysia's `onParse` hook: the request's JSON body, `{}` for an empty one (every body of the API
 * is an object, and a route whose fields are all optional may be sent without one), `RAW_BODY`
 * for an upload.
 */
export async function parseJsonBody(request: Request, contentType: string): Promise<unknown> {
  if (isUploadPath(pathOf(request.url))) return RAW_BODY
  const bytes = request.body ? new Uint8Array(await request.arrayBuffer()) : new Uint8Array()
  if (bytes.length === 0) return {}
  if (!JSON_TYPE.test(contentType.trim())) {
    throw new BodyError(415, 'request body must be JSON, sent with Content-Type: application/json')
  }
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new BodyError(400, 'request body is not valid UTF-8')
  }
  checkShape(text)
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new BodyError(400, 'request body is not valid JSON')
  }
  if (/\\u[dD][89a-fA-F]/.test(text)) checkWellFormed(value)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new BodyError(400, 'request body must be a JSON object')
  }
  return value
}

/**
 * Refuses nesting deeper than `MAX_JSON_DEPTH`, and more containers or members than allowed, with
 * one pass over the text, before `JSON.parse` builds anything. Brackets and colons inside strings
 * do not count; the text need not be valid JSON here (`JSON.parse` says so next), the counts only
 * have to be right for text that is.
 */
function checkShape(text: string): void {
  let depth = 0
  let containers = 0
  let members = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      // A backslash escapes the next character, whatever it is.
      if (c === 0x5c) i++
      else if (c === 0x22) inString = false
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) {
        throw new BodyError(400, `request body nests deeper than ${MAX_JSON_DEPTH} levels`)
      }
      if (++containers > MAX_JSON_CONTAINERS) {
        throw new BodyError(
          400,
          `request body has more than ${MAX_JSON_CONTAINERS} arrays and objects`,
        )
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    } else if (c === 0x3a && ++members > MAX_JSON_MEMBERS) {
      throw new BodyError(400, `request body has more than ${MAX_JSON_MEMBERS} object members`)
    }
  }
}

/** Every string and key of a (depth-checked) value is well-formed UTF-16: no lone surrogate. */
function checkWellFormed(value: unknown): void {
  if (typeof value === 'string') {
    if (!value.isWellFormed()) {
      throw new BodyError(400, 'request body holds a string that is not valid Unicode')
    }
  } else if (Array.isArray(value)) {
    for (const item of value) checkWellFormed(item)
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      checkWellFormed(key)
      checkWellFormed(item)
    }
  }
}
