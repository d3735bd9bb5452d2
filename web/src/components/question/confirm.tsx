import { Button } from '../ui.tsx'
import { FieldError, type InputProps, labelText } from './field.tsx'

/**
 * A confirm: alone in a message, its button answers `true` at once; among other inputs, it is
 * a button the person presses (and can press again to take back) before Send.
 */
export function ConfirmInput({
  block,
  state,
  error,
  single,
  busy,
  onChange,
  onPick,
}: InputProps<'confirm'>) {
  const label = labelText(block)
  const description = typeof block.description === 'string' ? block.description : ''
  const danger = block.danger === true
  if (single) {
    return (
      <div class="q-confirm">
        {description && <p>{description}</p>}
        <Button variant={danger ? 'danger' : 'primary'} busy={busy} onClick={() => onPick(true)}>
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
        variant={danger ? 'danger' : undefined}
        aria-pressed={state.pressed}
        onClick={() => onChange({ kind: 'confirm', pressed: !state.pressed })}
      >
        {state.pressed ? `✓ ${label}` : label}
      </Button>
      <FieldError block={block} error={error} />
    </div>
  )
}
