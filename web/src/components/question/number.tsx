import type { Block } from '../../lib/types.ts'
import { controlProps, type InputProps, TypedField } from './field.tsx'

const limit = (v: unknown) => (typeof v === 'number' ? v : undefined)

/** "From 1 to 10", "At least 1", "At most 10", or nothing without limits. */
function rangeHint(block: Block): string | undefined {
  const min = limit(block.min)
  const max = limit(block.max)
  if (min !== undefined && max !== undefined) return `From ${min} to ${max}`
  if (min !== undefined) return `At least ${min}`
  if (max !== undefined) return `At most ${max}`
  return undefined
}

/** A number: what is typed is checked against the limits on Send (answers.ts). */
export function NumberInput({ block, state, error, onChange }: InputProps<'number'>) {
  return (
    <TypedField block={block} error={error} fallbackLabel="Number" hint={rangeHint(block)}>
      <input
        {...controlProps(block, error)}
        type="number"
        inputMode="decimal"
        step="any"
        min={limit(block.min)}
        max={limit(block.max)}
        value={state.text}
        onInput={(e) => onChange({ kind: 'number', text: e.currentTarget.value })}
      />
    </TypedField>
  )
}
