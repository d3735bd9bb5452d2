import type { Block } from '../../lib/types.ts'

/**
 * What each input of a question holds while the person answers, and the value it answers
 * with. Answer shapes follow PRODUCT.md: one input → its value, several → an object keyed by
 * block id (index.tsx puts them together).
 */

export interface Option {
  label: string
  value?: string
  description?: string
  danger?: boolean
}

export type FieldState =
  | { kind: 'choice'; picked: string[]; otherOn: boolean; otherText: string }
  | { kind: 'text'; text: string }
  | { kind: 'number'; text: string }
  | { kind: 'toggle'; on: boolean }
  | { kind: 'confirm'; pressed: boolean }
  /** `html`: the block's html when the value was staged; an edited block stages anew. */
  | { kind: 'html'; replied: boolean; value: unknown; html: string }

export type StateOf<K extends FieldState['kind']> = Extract<FieldState, { kind: K }>

export const optionsOf = (b: Block) => (Array.isArray(b.options) ? (b.options as Option[]) : [])
export const optionValue = (o: Option) => o.value ?? o.label
export const idOf = (b: Block) => String(b.id)
export const htmlOf = (b: Block) => (typeof b.html === 'string' ? b.html : '')
/** The input's own label, if the agent gave one. */
export const givenLabel = (b: Block): string | undefined =>
  typeof b.label === 'string' && b.label.trim() ? b.label : undefined

/** What an input without a label is called: its kind, never its id (`choice`, `text_2`). */
const KIND_NAMES: Record<string, string> = {
  choice: 'Choice',
  text_input: 'Text',
  number_input: 'Number',
  toggle: 'Switch',
  confirm: 'Confirmation',
  html: 'Reply',
}

export const labelOf = (b: Block) => givenLabel(b) ?? KIND_NAMES[b.type] ?? 'Answer'

/** Picking answers at once only for these, and only when the message has no other input. */
export function isSimple(b: Block): boolean {
  return (b.type === 'choice' && b.multi !== true) || b.type === 'confirm' || b.type === 'html'
}

/** Has the embed staged a value for this very html (not an earlier form of the block)? */
export const isStaged = (b: Block, s: FieldState | undefined): s is StateOf<'html'> =>
  s?.kind === 'html' && s.replied && s.html === htmlOf(b)

export function initialState(b: Block): FieldState {
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
export function answerOf(b: Block, s: FieldState): { value: unknown } | { error: string } {
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
      if (!isStaged(b, s)) return { error: 'Answer in the embed above.' }
      return { value: s.value }
  }
}
