import { useState } from 'preact/hooks'
import type { Block } from '../../lib/types.ts'
import { Button } from '../ui.tsx'
import { type FieldState, isStaged } from './answers.ts'

/**
 * An html question's embed runs the agent's code, so its `reply()` only stages a value: shown
 * here, outside the frame, and sent only by the person's click or key press on the app's own
 * Send (docs/decisions.md, "Web app").
 */

/** How much of a staged value shows before "Show all". */
const PREVIEW_MAX = 240
/** Invisible or reordering characters, shown as \u escapes so the text reads as it is. */
const HIDDEN = /[\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g

/**
 * A JSON value as the person reads it: compact, one line, control and invisible characters
 * escaped, cut at PREVIEW_MAX characters (`total` then says how long it is in all).
 */
export function previewOf(value: unknown, max = PREVIEW_MAX): { text: string; total?: number } {
  // Pretty-printed, then joined on one line: JSON escapes every newline inside a string.
  const json = (JSON.stringify(value, null, 1) ?? 'null').replace(/\n */g, ' ')
  const text = json.replace(HIDDEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  if (text.length <= max) return { text }
  // Never half a surrogate pair.
  const end = /[\ud800-\udbff]/.test(text[max - 1] ?? '') ? max - 1 : max
  return { text: `${text.slice(0, end)}…`, total: text.length }
}

/**
 * Under an html question, outside its frame: what the embed staged with reply(), and for a
 * lone question the Send button that is the only way to answer it.
 */
export function StagedReply({
  block,
  state,
  single,
  busy,
  settling,
  onSend,
}: {
  block: Block
  state: FieldState | undefined
  single: boolean
  busy: boolean
  settling: boolean
  onSend: () => void
}) {
  const [all, setAll] = useState(false)
  if (!isStaged(block, state)) {
    return single ? (
      <p class="q-staged-hint">Answer in the embed above, then send it from here.</p>
    ) : null
  }
  const preview = previewOf(state.value, all ? Number.POSITIVE_INFINITY : PREVIEW_MAX)
  return (
    <div class="q-staged">
      <p class="q-staged-line" aria-live="polite">
        <span class="q-staged-label">The embed's answer:</span>{' '}
        <code class={`q-staged-value${all ? ' all' : ''}`}>{preview.text}</code>
        {preview.total !== undefined && <span class="muted"> ({preview.total} characters)</span>}
      </p>
      {preview.total !== undefined && (
        <Button variant="quiet" onClick={() => setAll(true)}>
          Show all
        </Button>
      )}
      {single && (
        <Button
          variant="primary"
          class="q-staged-send"
          busy={busy}
          disabled={settling}
          onClick={onSend}
        >
          Send
        </Button>
      )}
    </div>
  )
}
