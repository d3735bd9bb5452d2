import { type InputProps, labelText } from './field.tsx'

/** An on/off switch; it always has a value, so it never shows an error. */
export function ToggleInput({ block, state, onChange }: InputProps<'toggle'>) {
  return (
    <label class="q-toggle">
      <input
        type="checkbox"
        role="switch"
        aria-checked={state.on}
        checked={state.on}
        onChange={(e) => onChange({ kind: 'toggle', on: e.currentTarget.checked })}
      />
      <span>{labelText(block)}</span>
    </label>
  )
}
