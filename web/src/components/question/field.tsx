import type { ComponentChildren } from 'preact'
import type { Block } from '../../lib/types.ts'
import { type FieldState, idOf, type StateOf } from './answers.ts'

/** What every input of an open question gets from the form (input.tsx hands it on). */
export interface InputProps<K extends FieldState['kind']> {
  block: Block
  state: StateOf<K>
  error?: string
  /** The message's only input, and a simple one: picking answers at once. */
  single: boolean
  busy: boolean
  onChange: (s: FieldState) => void
  /** Answers with this value now (single inputs only). */
  onPick: (value: unknown) => void
}

/** The control's id, and the id of the error note that describes it while there is one. */
export function fieldIds(block: Block, error: string | undefined) {
  const id = `q-${idOf(block)}`
  const errorId = `${id}-error`
  return { id, errorId, describedBy: error ? errorId : undefined }
}

export const labelText = (block: Block) => (typeof block.label === 'string' ? block.label : '')

/** The input's error, beside it; the control points at it with aria-describedby. */
export function FieldError({ block, error }: { block: Block; error: string | undefined }) {
  if (!error) return null
  return (
    <p class="field-error" id={fieldIds(block, error).errorId}>
      {error}
    </p>
  )
}

export function RequiredMark({ block }: { block: Block }) {
  return block.required === true ? <span class="required"> (required)</span> : null
}

/**
 * The frame of a typed answer (text, number): its label, the control, a hint, the error. The
 * control gets `controlProps` so the label, requirement and error all reach it.
 */
export function TypedField({
  block,
  error,
  fallbackLabel,
  hint,
  children,
}: {
  block: Block
  error: string | undefined
  fallbackLabel: string
  hint?: ComponentChildren
  children: ComponentChildren
}) {
  return (
    <div class="field">
      <label class="field-label" for={fieldIds(block, error).id}>
        {labelText(block) || fallbackLabel}
        <RequiredMark block={block} />
      </label>
      {children}
      {hint && <span class="field-hint">{hint}</span>}
      <FieldError block={block} error={error} />
    </div>
  )
}

export function controlProps(block: Block, error: string | undefined) {
  const { id, describedBy } = fieldIds(block, error)
  return {
    id,
    required: block.required === true,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy,
  }
}
