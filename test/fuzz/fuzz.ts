/**
 * What the fuzz tests share: generators of hostile-but-plausible input (message bodies, blocks,
 * block patches, answers, query strings), and the two properties every request must keep:
 *   - it is answered, in bounded time, with 2xx or 4xx and a JSON body — a 4xx with
 *     `{ error: string }` — never 500, never a hang;
 *   - a rejected request changes nothing: the messages, the change counter and the files are
 *     exactly as before.
 */
import { expect } from 'bun:test'
import fc from 'fast-check'
import type { TestServer } from '../harness.ts'

/** Bounded so the whole fuzz suite stays well under a minute; raise locally to dig deeper. */
export const RUNS = Number(process.env.HARK_FUZZ_RUNS ?? 150)

/**
 * One seed for every property, so a run is the same run every time: the suites also check that
 * their generators reached both accepted and refused requests, which a random sample may miss.
 * Set HARK_FUZZ_SEED to explore other samples locally.
 */
export const SEED = Number(process.env.HARK_FUZZ_SEED ?? 42)
fc.configureGlobal({ seed: SEED })

// Any code unit now and then (a lone surrogate is a 400: test/fuzz/hostile.test.ts), mostly
// text that is Unicode, so that enough generated requests are ones the server takes.
const anyString = fc.oneof(
  { arbitrary: fc.string({ maxLength: 40 }), weight: 4 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }), weight: 2 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 40 }), weight: 1 },
  fc.constantFrom('', ' ', '__proto__', 'constructor', 'toString', '\u0000', '💥', 'a'.repeat(70)),
)
const anyNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, -1, 1e308, -0, Number.MAX_SAFE_INTEGER + 2),
)
export const jsonish = fc.oneof(
  { depthSize: 'small', maxDepth: 3 },
  fc.jsonValue({ maxDepth: 3 }),
  anyString,
  anyNumber,
  fc.boolean(),
  fc.constant(null),
)

/** A file id of the channel under test is put here so blocks can name a real file. */
export const knownIds = { file: 'file_none', block: 'b1' }

const BLOCK_TYPES = [
  'markdown',
  'heading',
  'code',
  'link',
  'progress',
  'keyvalue',
  'table',
  'image',
  'file',
  'html',
  'choice',
  'text_input',
  'number_input',
  'toggle',
  'confirm',
  'future_block',
]
const FIELDS = [
  'id',
  'text',
  'code',
  'language',
  'url',
  'label',
  'value',
  'max',
  'items',
  'columns',
  'rows',
  'file_id',
  'name',
  'alt',
  'mime',
  'size',
  'html',
  'height',
  'question',
  'options',
  'multi',
  'other',
  'required',
  'default',
  'placeholder',
  'multiline',
  'min',
  'description',
  'danger',
  '__proto__',
]

const fieldValue = fc.oneof(
  jsonish,
  fc.constant(knownIds.file).map(() => knownIds.file),
  fc.constantFrom('https://example.com/x', 'mailto:a@b.c', 'javascript:alert(1)', 'b1', 'b2'),
  fc.array(
    fc.record(
      { label: anyString, value: fc.option(anyString, { nil: undefined }), danger: fc.boolean() },
      { requiredKeys: [] },
    ),
    { maxLength: 4 },
  ),
  fc.array(fc.array(fc.oneof(anyString, anyNumber), { maxLength: 3 }), { maxLength: 3 }),
  fc.array(fc.record({ key: anyString, value: anyString }), { maxLength: 3 }),
)

/** A block: a known or unknown type with a random selection of fields, or not an object. */
export const block = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .tuple(
        fc.oneof(fc.constantFrom(...BLOCK_TYPES), jsonish),
        fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 6 }),
        fc.option(fc.constantFrom('b1', 'b2', 'b3'), { nil: undefined }),
      )
      .map(([type, fields, id]) => {
        const out: Record<string, unknown> = { ...fields, type }
        if (id !== undefined) out.id = id
        return out
      }),
  },
  { weight: 1, arbitrary: jsonish },
)

/** A message body: mostly shaped like one, sometimes anything at all, sometimes too big. */
export const body = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        title: fc.oneof(anyString, jsonish),
        text: fc.oneof(anyString, jsonish),
        blocks: fc.oneof(fc.array(block, { maxLength: 5 }), jsonish),
        extra: jsonish,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: jsonish },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom(500, 501, 65_536, 65_537, 300_000)
      .map((n) => ({ title: 't'.repeat(Math.min(n, 600)), text: 'x'.repeat(n) })),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(100, 101).map((n) => ({
      blocks: Array.from({ length: n }, () => ({ type: 'markdown', text: 'x' })),
    })),
  },
)

/** What `POST /v1/messages` and `PUT /v1/pins/:key` take, and much that they do not. */
export const sendRequest = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        body,
        silent: fc.oneof(fc.boolean(), jsonish),
        expires_in: fc.oneof(anyNumber, jsonish),
      },
      { requiredKeys: ['body'] },
    ),
  },
  { weight: 1, arbitrary: jsonish },
)

/** `block_patches`, in both accepted shapes and others. */
export const blockPatches = fc.oneof(
  fc.array(
    fc
      .tuple(
        fc.oneof(fc.constantFrom('b1', 'b2', 'nope'), jsonish),
        fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 3 }),
      )
      .map(([id, fields]) => ({ ...fields, id })),
    { maxLength: 3 },
  ),
  fc.dictionary(
    fc.constantFrom('b1', 'b2', 'nope', '__proto__'),
    fc.oneof(fc.dictionary(fc.constantFrom(...FIELDS), fieldValue, { maxKeys: 3 }), jsonish),
    { maxKeys: 3 },
  ),
  jsonish,
)

/** What `PATCH /v1/messages/:id` takes, and much that it does not. */
export const editRequest = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record(
      {
        title: fc.oneof(anyString, fc.constant(null), jsonish),
        text: fc.oneof(anyString, fc.constant(null), jsonish),
        blocks: fc.oneof(fc.array(block, { maxLength: 4 }), jsonish),
        block_patches: blockPatches,
        other: jsonish,
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: jsonish },
)

/** Answers of every shape: values, wrong types, objects keyed by real and unknown ids. */
export const answer = fc.oneof(
  jsonish,
  fc.boolean(),
  anyNumber,
  fc.constantFrom('A', 'B', 'a', 'yes', ''),
  fc.array(fc.constantFrom('A', 'B', 'C', 'x'), { maxLength: 4 }),
  fc.dictionary(
    fc.constantFrom('c', 'n', 't', 'x', 'go', 'flag', '__proto__'),
    fc.oneof(jsonish, fc.constantFrom('A', 'B', 5, true, ['A'])),
    { maxKeys: 4 },
  ),
  fc.constant('y'.repeat(70_000)),
)

/** A query-string value: junk, near-misses, and valid values (small waits only). */
export const queryValue = fc.oneof(
  anyString,
  fc.constantFrom(
    '0',
    '1',
    '-1',
    '1e3',
    '0x10',
    'NaN',
    'Infinity',
    '1.5',
    '',
    '00',
    '9'.repeat(20),
  ),
  fc.integer({ min: -5, max: 1_000_000 }).map(String),
)
/** A `wait`: anything, but a valid number above 0.2 s becomes 0.1 so nothing holds long. */
export const waitValue = queryValue.map((v) => {
  const n = Number(v)
  return Number.isFinite(n) && n > 0.2 ? '0.1' : v
})

export interface Fingerprint {
  seq: number
  messages: unknown[]
  files: unknown[]
}

/** Everything a write could change. */
export function fingerprint(s: TestServer): Fingerprint {
  return {
    seq: (
      s.ctx.db.query("SELECT value FROM counters WHERE name = 'change_seq'").get() as {
        value: number
      }
    ).value,
    messages: s.ctx.db.query('SELECT * FROM messages ORDER BY rid').all(),
    files: s.ctx.db.query('SELECT * FROM files ORDER BY id').all(),
  }
}

/** Answered within this long, or it counts as a hang. */
const HANG_MS = 5000

/**
 * Sends one request through the real app and checks the answer's shape. Returns its status;
 * when it is a 4xx, also proves that nothing changed.
 */
export async function probe(s: TestServer, request: Request): Promise<number> {
  const before = fingerprint(s)
  const what = `${request.method} ${new URL(request.url).pathname}${new URL(request.url).search.slice(0, 200)}`
  const response = await Promise.race([
    s.app.handle(request),
    Bun.sleep(HANG_MS).then(() => undefined),
  ])
  if (!response) throw new Error(`no answer within ${HANG_MS} ms: ${what}`)
  const text = await response.text()
  const status = response.status
  if (!((status >= 200 && status < 300) || (status >= 400 && status < 500))) {
    throw new Error(`${what} → ${status}: ${text.slice(0, 300)}`)
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  } catch {
    throw new Error(`${what} → ${status} with a body that is not JSON: ${text.slice(0, 200)}`)
  }
  expect(response.headers.get('content-type') ?? '').toContain('application/json')
  if (status >= 400) {
    const error = (data as { error?: unknown }).error
    if (typeof error !== 'string' || error === '') {
      throw new Error(`${what} → ${status} without an error message: ${text.slice(0, 200)}`)
    }
    const after = fingerprint(s)
    if (!Bun.deepEquals(before, after)) {
      throw new Error(`${what} → ${status} (${error}) but it changed the stored data`)
    }
  }
  return status
}

/** A request with a raw body (JSON-encoded unless it is a string already). */
export function jsonRequest(
  token: string | undefined,
  method: string,
  path: string,
  payload?: unknown,
): Request {
  const headers: Record<string, string> = { 'content-type': 'application/json' }
  if (token) headers.authorization = `Bearer ${token}`
  return new Request(`http://hark.test${path}`, {
    method,
    headers,
    body: payload === undefined ? undefined : JSON.stringify(payload),
  })
}
