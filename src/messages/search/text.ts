/**
 * A new message's indexed text (title and body), computed here rather than by Postgres, for the
 * message store's insert on Postgres (messages/pg-store.ts): it writes the message's
 * `message_search` row in the insert's own statement. The rule is the view
 * `message_search_text`'s (migrations 012, SQLite and Postgres), for a message with no answer
 * yet (a new one): the title, then the body's strings a person reads, in document order, a line
 * apart; no row for a body that is not JSON. Postgres' trigger computing it in PL/pgSQL was
 * ~0.15 ms of a send's ~0.7 ms of Postgres CPU (bench/README.md, "One person's sends on
 * Postgres, third pass"). test/pg/search-text.test.ts holds it to the view's text on generated
 * documents, and edits and answers are still indexed by the trigger, from the view's rule.
 *
 * Only for the text JSON.stringify writes (what every send stores): there an object's members
 * come in the order this process walks them, no key repeats and numbers are written as
 * JavaScript writes them, so the walk below sees the document as Postgres' `json` does.
 * Anything else (another writer's text, repeated keys, a `\u0000` or a lone surrogate, which
 * Postgres' json refuses or cannot make text of) is undefined: the statement then leaves the
 * row to the trigger, which applies the view's rule itself.
 */
export function newMessageText(body: string | null): { title: string; body: string } | undefined {
  if (body === null || UNSAFE_ESCAPE.test(body)) return undefined
  let doc: unknown
  try {
    doc = JSON.parse(body)
  } catch {
    return undefined
  }
  if (JSON.stringify(doc) !== body) return undefined
  const title = isObject(doc) ? doc.title : undefined
  return {
    title: unmark(
      title === undefined || title === null
        ? ''
        : typeof title === 'string'
          ? title
          : JSON.stringify(title),
    ),
    body: unmark((isObject(doc) || Array.isArray(doc) ? strings(doc, '$') : undefined) ?? ''),
  }
}

/** `\u0000` and surrogate escapes: text Postgres' json cannot hold or turn into text. */
const UNSAFE_ESCAPE = /\\u(0000|d[89a-f])/i

/** The view's keys whose strings are indexed (migration 012's list). */
const KEYS = new Set([
  'text',
  'code',
  'label',
  'name',
  'alt',
  'summary',
  'description',
  'placeholder',
  'tool',
  'key',
  'value',
  'command',
])

// The view's LIKE patterns on a string's container path ('%' is any text, newlines too).
const HTML = /^\$\.blocks\[.*\]\.html$/s
const COLUMNS = /^\$\.blocks\[.*\]\.columns$/s
const ROWS = /^\$\.blocks\[.*\]\.rows\[.*\]$/s

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

const unmark = (s: string) => s.replaceAll('\u0002', ' ').replaceAll('\u0003', ' ')

/**
 * The indexed strings under `node` (an object or array at json_tree path `path`), a line
 * apart, or undefined when there are none: pg migration 012's `hark_search_strings` for a body.
 */
function strings(node: Record<string, unknown> | unknown[], path: string): string | undefined {
  let acc: string | undefined
  // What the view's rule asks of a string's container: its path, tested once per container.
  const html = HTML.test(path)
  const cell = !html && (COLUMNS.test(path) || ROWS.test(path))
  const visit = (key: string | undefined, value: unknown, child: () => string) => {
    let part: string | undefined
    if (typeof value === 'string') {
      // A string without a key (an array's element) counts only as a table's column or cell;
      // with one, if its key is one the view lists (or it is a column or cell), never the
      // root's title and never under an html block's `html`.
      const kept =
        key === undefined
          ? cell
          : !html && (cell || KEYS.has(key)) && (path !== '$' || key !== 'title')
      if (kept) part = value
    } else if (Array.isArray(value) || isObject(value)) {
      part = strings(value, child())
    }
    if (part !== undefined) acc = acc === undefined ? part : `${acc}\n${part}`
  }
  if (Array.isArray(node)) {
    for (const [i, v] of node.entries()) visit(undefined, v, () => `${path}[${i}]`)
  } else for (const [k, v] of Object.entries(node)) visit(k, v, () => `${path}.${k}`)
  return acc
}
