import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { Plain } from './plain.tsx'

/**
 * The pieces an approval card is made of: code that folds when long, a file path, and any
 * input as key/values. Everything here is the agent's text rendered as text (Preact escapes
 * it), never as HTML: an approval shows exactly what will run, whatever it contains.
 */

/** Folded to this many lines (or characters, for one huge line) until the person asks. */
export const FOLD_LINES = 16
const FOLD_CHARS = 1600

/** "Show all N lines" under what was cut short; "Show less" once opened. */
export function ShowMore({
  open,
  total,
  unit = 'lines',
  onToggle,
}: {
  open: boolean
  total: number
  unit?: string
  onToggle: () => void
}) {
  return (
    <button type="button" class="ap-more" aria-expanded={open} onClick={onToggle}>
      {open ? 'Show less' : `Show all ${total} ${unit}`}
    </button>
  )
}

/** Code or long text: wrapped (never wider than the phone), folded past FOLD_LINES. */
export function CodeText({ text, class: cls }: { text: string; class?: string }) {
  const [open, setOpen] = useState(false)
  const lines = text.split('\n')
  const long = lines.length > FOLD_LINES || text.length > FOLD_CHARS
  let shown = text
  if (long && !open) {
    shown = lines.slice(0, FOLD_LINES).join('\n')
    if (shown.length > FOLD_CHARS) shown = shown.slice(0, FOLD_CHARS)
    shown += '\n…'
  }
  return (
    <div class="ap-code-wrap">
      <pre class={['ap-code', cls].filter(Boolean).join(' ')}>
        <code>
          <Plain text={shown} />
        </code>
      </pre>
      {long && (
        <ShowMore
          open={open}
          total={lines.length > 1 ? lines.length : text.length}
          unit={lines.length > 1 ? 'lines' : 'characters'}
          onToggle={() => setOpen(!open)}
        />
      )}
    </div>
  )
}

/** A file path: the folder muted, the file's name bold, wrapping anywhere. */
export function FilePath({ path, note }: { path: string; note?: ComponentChildren }) {
  const cut = path.lastIndexOf('/') + 1
  return (
    <p class="ap-file">
      <code>
        <span class="ap-dir">
          <Plain text={path.slice(0, cut)} />
        </span>
        <strong>
          <Plain text={path.slice(cut)} />
        </strong>
      </code>
      {note && <span class="ap-note">{note}</span>}
    </p>
  )
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

/** One value: short text inline, long text and nested JSON as folded blocks. */
function Value({ value }: { value: unknown }) {
  if (typeof value === 'string') {
    if (value === '') return <span class="ap-empty">(empty)</span>
    if (value.includes('\n') || value.length > 120) return <CodeText text={value} />
    return (
      <span class="ap-str">
        <Plain text={value} />
      </span>
    )
  }
  if (value === null || typeof value !== 'object') {
    return <code class="ap-scalar">{String(value)}</code>
  }
  if (Array.isArray(value) && value.length === 0) return <code class="ap-scalar">[]</code>
  if (isRecord(value) && Object.keys(value).length === 0)
    return <code class="ap-scalar">{'{}'}</code>
  // Short lists and records read best on one line; longer ones pretty-printed.
  const compact = JSON.stringify(value)
  if (compact.length <= 48) return <code class="ap-json-inline">{compact}</code>
  return <CodeText text={JSON.stringify(value, null, 2)} class="ap-json" />
}

/**
 * Any input as key/values (an MCP tool's arguments, Codex's fields, what a known tool carries
 * besides the fields its view shows): `omit` names those shown already.
 */
export function Fields({ input, omit = [] }: { input: unknown; omit?: string[] }) {
  if (!isRecord(input)) {
    if (input === null || input === undefined) return null
    return (
      <div class="ap-fields">
        <Value value={input} />
      </div>
    )
  }
  const entries = Object.entries(input).filter(([k]) => !omit.includes(k))
  if (entries.length === 0) return null
  return (
    <dl class="ap-fields">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>
            <Plain text={key} />
          </dt>
          <dd>
            <Value value={value} />
          </dd>
        </div>
      ))}
    </dl>
  )
}

export { isRecord }
