import { Fragment } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, errorText } from '../lib/api.ts'
import * as client from '../lib/client.ts'
import { fromNow } from '../lib/format.ts'
import type { Block, Message } from '../lib/types.ts'
import { DisplayBlock, isInput } from './blocks.tsx'
import { Button, ErrorNote } from './ui.tsx'

/**
 * A question: its blocks in order, the inputs live. The spec's submission rule: when the
 * message has exactly one simple input (a single choice, a confirm, an html question), picking
 * answers at once; otherwise one Send button submits every input together. Answer shapes
 * follow PRODUCT.md: one input → its value, several → an object keyed by block id.
 *
 * An html question is the exception: its embed runs the agent's code, so `reply()` in it only
 * stages a value. The staged value is shown here, outside the frame, and only the person's
 * click or key press on the app's own Send button sends it; a later reply replaces it until
 * then (docs/decisions.md, "Web app").
 */

/** After the staged value changes, how long its Send stays disabled: no swap under a click. */
const SETTLE_MS = 700
/** How much of a staged value shows before "Show all". */
const PREVIEW_MAX = 240
/** Invisible or reordering characters, shown as \u escapes so the text reads as it is. */
const HIDDEN = /[\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g

interface Option {
  label: string
  value?: string
  description?: string
  danger?: boolean
}

type FieldState =
  | { kind: 'choice'; picked: string[]; otherOn: boolean; otherText: string }
  | { kind: 'text'; text: string }
  | { kind: 'number'; text: string }
  | { kind: 'toggle'; on: boolean }
  | { kind: 'confirm'; pressed: boolean }
  /** `html`: the block's html when the value was staged; an edited block stages anew. */
  | { kind: 'html'; replied: boolean; value: unknown; html: string }

const optionsOf = (b: Block) => (Array.isArray(b.options) ? (b.options as Option[]) : [])
const optionValue = (o: Option) => o.value ?? o.label
const idOf = (b: Block) => String(b.id)
const htmlOf = (b: Block) => (typeof b.html === 'string' ? b.html : '')
const labelOf = (b: Block) =>
  typeof b.label === 'string' && b.label ? b.label : b.type === 'html' ? 'Reply' : idOf(b)

/** Picking answers at once only for these, and only when the message has no other input. */
function isSimple(b: Block): boolean {
  return (b.type === 'choice' && b.multi !== true) || b.type === 'confirm' || b.type === 'html'
}

function initialState(b: Block): FieldState {
  switch (b.type) {
    case 'choice': {
      const values = new Set(optionsOf(b).map(optionValue))
      const defaults = (Array.isArray(b.default) ? b.default : b.default ? [b.default] : []).map(
        String,
      )
      const other = defaults.find((d) => !values.has(d))
      return {
        kind: 'choice',
        picked: defaults.filter((d) => values.has(d)),
        otherOn: other !== undefined,
        otherText: other ?? '',
      }
    }
    case 'text_input':
      return { kind: 'text', text: typeof b.default === 'string' ? b.default : '' }
    case 'number_input':
      return { kind: 'number', text: typeof b.default === 'number' ? String(b.default) : '' }
    case 'toggle':
      return { kind: 'toggle', on: b.default === true }
    case 'confirm':
      return { kind: 'confirm', pressed: false }
    default:
      return { kind: 'html', replied: false, value: undefined, html: htmlOf(b) }
  }
}

/** The value this input answers with, or an error to show beside it. */
function answerOf(b: Block, s: FieldState): { value: unknown } | { error: string } {
  const required = b.required === true
  switch (s.kind) {
    case 'choice': {
      const other = s.otherOn ? s.otherText.trim() : ''
      if (s.otherOn && !other) return { error: 'Type your answer, or untick “Other”.' }
      if (b.multi === true) {
        const all = other ? [...s.picked, other] : s.picked
        if (required && all.length === 0) return { error: 'Pick at least one.' }
        return { value: all }
      }
      const one = other || s.picked[0]
      if (!one) return required ? { error: 'Pick one.' } : { value: null }
      return { value: one }
    }
    case 'text':
      if (required && s.text.trim() === '') return { error: 'This is required.' }
      return { value: s.text === '' ? null : s.text }
    case 'number': {
      if (s.text.trim() === '') return required ? { error: 'This is required.' } : { value: null }
      const n = Number(s.text)
      if (!Number.isFinite(n)) return { error: 'Enter a number.' }
      if (typeof b.min === 'number' && n < b.min) return { error: `At least ${b.min}.` }
      if (typeof b.max === 'number' && n > b.max) return { error: `At most ${b.max}.` }
      return { value: n }
    }
    case 'toggle':
      return { value: s.on }
    case 'confirm':
      return { value: s.pressed ? true : null }
    case 'html':
      if (!s.replied || s.html !== htmlOf(b)) return { error: 'Answer in the embed above.' }
      return { value: s.value }
  }
}

export function Question({
  message,
  onAnswered,
}: {
  message: Message
  onAnswered: (m: Message) => void
}) {
  const blocks = (message.body.blocks ?? []) as Block[]
  const inputs = blocks.filter(isInput)
  const open = message.ask?.status === 'open'
  const single = inputs.length === 1 && isSimple(inputs[0] as Block)
  const [states, setStates] = useState<Record<string, FieldState>>(() =>
    Object.fromEntries(inputs.map((b) => [idOf(b), initialState(b)])),
  )
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const form = useRef<HTMLFormElement>(null)
  /** Set from the first send on: nothing is staged or sent again (unset if the send failed). */
  const sending = useRef(false)
  const [settling, setSettling] = useState(false)
  const settleTimer = useRef<ReturnType<typeof setTimeout>>(undefined)
  useEffect(() => () => clearTimeout(settleTimer.current), [])

  const update = (id: string, next: FieldState) => {
    setStates((s) => ({ ...s, [id]: next }))
    setErrors((e) => {
      const { [id]: _, ...rest } = e
      return rest
    })
  }

  const submit = async (answer: unknown) => {
    if (sending.current) return
    sending.current = true
    setBusy(true)
    setError(null)
    try {
      onAnswered(await client.answer(message.id, answer))
    } catch (e) {
      sending.current = false
      setError(
        e instanceof ApiError && e.status === 409
          ? 'This question is closed: it was answered, cancelled or it expired.'
          : errorText(e),
      )
    } finally {
      setBusy(false)
    }
  }

  /** Several inputs, or one that is not simple: check them all, then send them together. */
  const sendAll = (event: Event) => {
    event.preventDefault()
    if (settling) return
    const found: Record<string, string> = {}
    const values: Record<string, unknown> = {}
    for (const b of inputs) {
      const result = answerOf(b, states[idOf(b)] as FieldState)
      if ('error' in result) found[idOf(b)] = result.error
      else values[idOf(b)] = result.value
    }
    setErrors(found)
    const firstBad = inputs.find((b) => found[idOf(b)])
    if (firstBad) {
      const el = form.current?.querySelector<HTMLElement>(
        `[data-input="${CSS.escape(idOf(firstBad))}"] :is(input, textarea, button)`,
      )
      el?.focus()
      return
    }
    const only = inputs[0] as Block
    void submit(inputs.length === 1 ? values[idOf(only)] : values)
  }

  /** The embed's reply: staged, never sent; Send waits a moment after every change. */
  const onHtmlReply = (b: Block) => (value: unknown) => {
    if (!open || sending.current) return
    update(idOf(b), { kind: 'html', replied: true, value, html: htmlOf(b) })
    setSettling(true)
    clearTimeout(settleTimer.current)
    settleTimer.current = setTimeout(() => setSettling(false), SETTLE_MS)
  }

  /** The app's Send under a lone html question: sends exactly the value shown above it. */
  const sendStaged = (b: Block) => {
    const s = states[idOf(b)]
    if (settling || s?.kind !== 'html' || !s.replied || s.html !== htmlOf(b)) return
    void submit(s.value)
  }

  const body = blocks.map((b, i) => {
    const key = b.id ?? `#${i}`
    if (open && b.type === 'html' && isInput(b)) {
      return (
        <Fragment key={key}>
          <DisplayBlock block={b} channelId={message.channel_id} onHtmlReply={onHtmlReply(b)} />
          <StagedReply
            block={b}
            state={states[idOf(b)] as FieldState}
            single={single}
            busy={busy}
            settling={settling}
            onSend={() => sendStaged(b)}
          />
        </Fragment>
      )
    }
    if (!isInput(b) || b.type === 'html') {
      return <DisplayBlock key={key} block={b} channelId={message.channel_id} />
    }
    if (!open) return null
    return (
      <div key={key} data-input={idOf(b)} class="q-input">
        <InputField
          block={b}
          state={states[idOf(b)] as FieldState}
          error={errors[idOf(b)]}
          single={single}
          busy={busy}
          onChange={(s) => update(idOf(b), s)}
          onPick={(v) => void submit(v)}
        />
      </div>
    )
  })

  const htmlState = inputs.find((b) => b.type === 'html')
  return (
    <div class="question">
      {open ? (
        <form ref={form} onSubmit={sendAll} noValidate aria-busy={busy || undefined}>
          {body}
          {htmlState && !single && errors[idOf(htmlState)] && (
            <ErrorNote error={errors[idOf(htmlState)]} />
          )}
          {!single && (
            <div class="q-actions">
              <Button type="submit" variant="primary" busy={busy} disabled={settling}>
                Send
              </Button>
            </div>
          )}
          <ErrorNote error={error} />
          {message.ask?.expires_at && (
            <p class="q-expiry">Expires {fromNow(message.ask.expires_at)}</p>
          )}
        </form>
      ) : (
        <>
          {body}
          <Outcome message={message} inputs={inputs} />
        </>
      )}
    </div>
  )
}

function InputField({
  block,
  state,
  error,
  single,
  busy,
  onChange,
  onPick,
}: {
  block: Block
  state: FieldState
  error?: string
  single: boolean
  busy: boolean
  onChange: (s: FieldState) => void
  onPick: (value: unknown) => void
}) {
  const id = `q-${idOf(block)}`
  const errorId = `${id}-error`
  const describedBy = error ? errorId : undefined
  const required = block.required === true
  const label = typeof block.label === 'string' ? block.label : ''
  const errorNote = error && (
    <p class="field-error" id={errorId}>
      {error}
    </p>
  )

  if (state.kind === 'confirm') {
    const description = typeof block.description === 'string' ? block.description : ''
    if (single) {
      return (
        <div class="q-confirm">
          {description && <p>{description}</p>}
          <Button
            variant={block.danger === true ? 'danger' : 'primary'}
            busy={busy}
            onClick={() => onPick(true)}
          >
            {label}
          </Button>
        </div>
      )
    }
    return (
      <div class="q-confirm">
        {description && <p>{description}</p>}
        <Button
          class={state.pressed ? 'pressed' : ''}
          variant={block.danger === true ? 'danger' : undefined}
          aria-pressed={state.pressed}
          onClick={() => onChange({ kind: 'confirm', pressed: !state.pressed })}
        >
          {state.pressed ? `✓ ${label}` : label}
        </Button>
        {errorNote}
      </div>
    )
  }

  if (state.kind === 'choice') {
    const options = optionsOf(block)
    const multi = block.multi === true
    if (single) {
      return (
        <fieldset class="q-choice single" aria-describedby={describedBy}>
          {label && <legend>{label}</legend>}
          <div class="q-options">
            {options.map((o) => (
              <button
                key={optionValue(o)}
                type="button"
                class={`q-option${o.danger ? ' danger' : ''}`}
                disabled={busy}
                onClick={() => onPick(optionValue(o))}
              >
                <span class="q-option-label">{o.label}</span>
                {o.description && <span class="q-option-description">{o.description}</span>}
              </button>
            ))}
          </div>
          {block.other === true && <OtherAnswer busy={busy} onSend={(text) => onPick(text)} />}
          {errorNote}
        </fieldset>
      )
    }
    const toggle = (v: string, on: boolean) => {
      const picked = multi
        ? on
          ? [...state.picked, v]
          : state.picked.filter((p) => p !== v)
        : on
          ? [v]
          : []
      onChange({ ...state, picked, otherOn: multi ? state.otherOn : false })
    }
    return (
      <fieldset class="q-choice" aria-describedby={describedBy} aria-invalid={!!error || undefined}>
        <legend>
          {label || (multi ? 'Pick any' : 'Pick one')}
          {required && <span class="required"> (required)</span>}
        </legend>
        {options.map((o) => (
          <label key={optionValue(o)} class={`q-check${o.danger ? ' danger' : ''}`}>
            <input
              type={multi ? 'checkbox' : 'radio'}
              name={id}
              value={optionValue(o)}
              checked={state.picked.includes(optionValue(o))}
              onChange={(e) => toggle(optionValue(o), e.currentTarget.checked)}
            />
            <span>
              <span class="q-option-label">{o.label}</span>
              {o.description && <span class="q-option-description">{o.description}</span>}
            </span>
          </label>
        ))}
        {block.other === true && (
          <div class="q-other">
            <label class="q-check">
              <input
                type={multi ? 'checkbox' : 'radio'}
                name={id}
                checked={state.otherOn}
                onChange={(e) =>
                  onChange({
                    ...state,
                    otherOn: e.currentTarget.checked,
                    picked: multi ? state.picked : [],
                  })
                }
              />
              <span>Other</span>
            </label>
            <input
              type="text"
              aria-label={`${label || 'Answer'}: other`}
              value={state.otherText}
              onInput={(e) =>
                onChange({
                  ...state,
                  otherText: e.currentTarget.value,
                  otherOn: true,
                  picked: multi ? state.picked : [],
                })
              }
            />
          </div>
        )}
        {errorNote}
      </fieldset>
    )
  }

  if (state.kind === 'toggle') {
    return (
      <label class="q-toggle">
        <input
          type="checkbox"
          role="switch"
          aria-checked={state.on}
          checked={state.on}
          onChange={(e) => onChange({ kind: 'toggle', on: e.currentTarget.checked })}
        />
        <span>{label}</span>
      </label>
    )
  }

  // Text and number inputs.
  const common = {
    id,
    required,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  }
  return (
    <div class="field">
      <label class="field-label" for={id}>
        {label || (state.kind === 'number' ? 'Number' : 'Answer')}
        {required && <span class="required"> (required)</span>}
      </label>
      {state.kind === 'number' ? (
        <input
          {...common}
          type="number"
          inputMode="decimal"
          step="any"
          min={typeof block.min === 'number' ? block.min : undefined}
          max={typeof block.max === 'number' ? block.max : undefined}
          value={state.text}
          onInput={(e) => onChange({ kind: 'number', text: e.currentTarget.value })}
        />
      ) : block.multiline === true ? (
        <textarea
          {...common}
          rows={4}
          placeholder={typeof block.placeholder === 'string' ? block.placeholder : undefined}
          value={(state as { text: string }).text}
          onInput={(e) => onChange({ kind: 'text', text: e.currentTarget.value })}
        />
      ) : (
        <input
          {...common}
          type="text"
          placeholder={typeof block.placeholder === 'string' ? block.placeholder : undefined}
          value={(state as { text: string }).text}
          onInput={(e) => onChange({ kind: 'text', text: e.currentTarget.value })}
        />
      )}
      {state.kind === 'number' &&
        (typeof block.min === 'number' || typeof block.max === 'number') && (
          <span class="field-hint">
            {typeof block.min === 'number' && typeof block.max === 'number'
              ? `From ${block.min} to ${block.max}`
              : typeof block.min === 'number'
                ? `At least ${block.min}`
                : `At most ${block.max}`}
          </span>
        )}
      {errorNote}
    </div>
  )
}

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
function StagedReply({
  block,
  state,
  single,
  busy,
  settling,
  onSend,
}: {
  block: Block
  state: FieldState
  single: boolean
  busy: boolean
  settling: boolean
  onSend: () => void
}) {
  const [all, setAll] = useState(false)
  const staged = state.kind === 'html' && state.replied && state.html === htmlOf(block)
  if (!staged) {
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

/** A single choice's typed answer: its own small Send, since picking cannot submit text. */
function OtherAnswer({ busy, onSend }: { busy: boolean; onSend: (text: string) => void }) {
  const [text, setText] = useState('')
  return (
    <div class="q-other-single">
      <input
        type="text"
        aria-label="Other answer"
        placeholder="Other…"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && text.trim()) {
            e.preventDefault()
            onSend(text.trim())
          }
        }}
      />
      <Button busy={busy} disabled={!text.trim()} onClick={() => onSend(text.trim())}>
        Send
      </Button>
    </div>
  )
}

/** How one input's answer reads: option labels, On/Off, the text itself. */
function describe(b: Block, value: unknown): string {
  if (value === null || value === undefined) return b.type === 'confirm' ? 'Not confirmed' : '—'
  switch (b.type) {
    case 'choice': {
      const options = optionsOf(b)
      const name = (v: unknown) => options.find((o) => optionValue(o) === v)?.label ?? String(v)
      const list = Array.isArray(value) ? value.map(name) : [name(value)]
      return list.length ? list.join(', ') : '—'
    }
    case 'toggle':
      return value === true ? 'On' : 'Off'
    case 'confirm':
      return 'Confirmed'
    case 'text_input':
      return value === '' ? '(empty)' : String(value)
    case 'number_input':
      return String(value)
    default:
      return typeof value === 'string' ? value : JSON.stringify(value)
  }
}

function Outcome({ message, inputs }: { message: Message; inputs: Block[] }) {
  const ask = message.ask
  if (!ask) return null
  if (ask.status === 'cancelled') {
    return <p class="q-outcome cancelled">Cancelled by the agent.</p>
  }
  const answer = ask.answer
  const valueFor = (b: Block) =>
    inputs.length === 1 ? answer : (answer as Record<string, unknown> | null)?.[idOf(b)]
  const heading =
    ask.status === 'answered'
      ? `Answered${ask.answered_at ? ` ${fromNow(ask.answered_at)}` : ''}`
      : 'Expired — the agent got the defaults'
  return (
    <div class={`q-outcome ${ask.status}`}>
      <p class="q-outcome-head">{heading}</p>
      {answer !== undefined && (
        <dl>
          {inputs.map((b) => (
            <div key={idOf(b)}>
              <dt>{labelOf(b)}</dt>
              <dd>{describe(b, valueFor(b))}</dd>
            </div>
          ))}
        </dl>
      )}
    </div>
  )
}
