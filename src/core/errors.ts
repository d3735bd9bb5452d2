/**
 * One error type for the whole server. Services throw `HarkError`s; the single `onError`
 * in `app.ts` renders every failure as `{ "error": "...", "field"?: "..." }`.
 */
export class HarkError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** The request field at fault, e.g. `body.blocks[2].options` or `wait`. */
    readonly field?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(field ? `${field}: ${message}` : message)
  }
}

/**
 * A failure of a command or of start-up whose message says everything the operator needs
 * (port taken, data dir not writable, database too new, bad backup): printed without a stack.
 */
export class FatalError extends Error {}

/** A command line that cannot be run as written (exit 2): an unknown flag, a missing value. */
export class UsageError extends Error {}

/** The catalogue: every status the API gives, with its wording in one place. */
export const fail = {
  invalid: (field: string, message: string) => new HarkError(400, message, field),
  badRequest: (message: string) => new HarkError(400, message),
  unauthorized: (message = 'missing or invalid token') =>
    new HarkError(401, message, undefined, { 'WWW-Authenticate': 'Bearer' }),
  forbidden: (message: string) => new HarkError(403, message),
  notFound: (what: string) => new HarkError(404, `${what} not found`),
  conflict: (message: string) => new HarkError(409, message),
  tooLarge: (message: string) => new HarkError(413, message),
  unavailable: (message: string) => new HarkError(503, message),
}

export function errorResponse(
  status: number,
  message: string,
  field?: string,
  headers?: Record<string, string>,
): Response {
  const body = field ? { error: message, field } : { error: message }
  return new Response(JSON.stringify(body), {
    status,
    // An error is an API answer like any other: no cache keeps it (see `noStore`).
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...headers,
    },
  })
}

const JSON_HEADERS = {
  'content-type': 'application/json;charset=utf-8',
  'cache-control': 'no-store',
} as const

/**
 * A 200 answer whose body is already JSON text, with the headers Elysia gives a returned object
 * (the feed builds its text straight from the rows; see `feedJson`). A `Blob` is JSON already
 * encoded, shared by many answers: the polls one change wakes all send the same bytes
 * (src/messages/feed.ts), each answer a reference to them, not a copy.
 */
export function jsonResponse(json: string | Blob): Response {
  return new Response(json, { headers: JSON_HEADERS })
}

/** Longest key of a field name repeated in an error: an unknown key is the client's own text. */
const FIELD_PART_MAX = 64

/** `/body/blocks/2/options` (a JSON pointer) → `body.blocks[2].options`; long keys cut short. */
export function pointerToField(pointer: string): string {
  let out = ''
  for (const raw of pointer.split('/').slice(1)) {
    const whole = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    const part = whole.length > FIELD_PART_MAX ? `${whole.slice(0, FIELD_PART_MAX)}…` : whole
    if (/^\d+$/.test(part)) out += `[${part}]`
    else out += out ? `.${part}` : part
  }
  return out
}
