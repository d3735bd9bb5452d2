import { useState } from 'preact/hooks'
import { Button } from '../ui.tsx'
import { type Option, optionsOf, optionValue } from './answers.ts'
import { FieldError, fieldIds, type InputProps, labelText, RequiredMark } from './field.tsx'

/**
 * A choice. Alone in a message (and not multi), each option is a button that answers at once;
 * otherwise radios or checkboxes that go with Send, with a typed "Other" when the block allows.
 */
export function ChoiceInput(props: InputProps<'choice'>) {
  return props.single ? <PickOne {...props} /> : <PickInForm {...props} />
}

function OptionText({ option }: { option: Option }) {
  return (
    <>
      <span class="q-option-label">{option.label}</span>
      {option.description && <span class="q-option-description">{option.description}</span>}
    </>
  )
}

function PickOne({ block, error, busy, onPick }: InputProps<'choice'>) {
  const label = labelText(block)
  return (
    <fieldset class="q-choice single" aria-describedby={fieldIds(block, error).describedBy}>
      {label && <legend>{label}</legend>}
      <div class="q-options">
        {optionsOf(block).map((o) => (
          <button
            key={optionValue(o)}
            type="button"
            class={`q-option${o.danger ? ' danger' : ''}`}
            disabled={busy}
            onClick={() => onPick(optionValue(o))}
          >
            <OptionText option={o} />
          </button>
        ))}
      </div>
      {block.other === true && <OtherAnswer busy={busy} onSend={(text) => onPick(text)} />}
      <FieldError block={block} error={error} />
    </fieldset>
  )
}

function PickInForm({ block, state, error, onChange }: InputProps<'choice'>) {
  const { id, describedBy } = fieldIds(block, error)
  const label = labelText(block)
  const multi = block.multi === true
  // A single choice holds one pick: an option or the typed "Other", never both.
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
  const setOther = (otherOn: boolean, otherText = state.otherText) =>
    onChange({ ...state, otherOn, otherText, picked: multi ? state.picked : [] })
  return (
    <fieldset class="q-choice" aria-describedby={describedBy} aria-invalid={!!error || undefined}>
      <legend>
        {label || (multi ? 'Pick any' : 'Pick one')}
        <RequiredMark block={block} />
      </legend>
      {optionsOf(block).map((o) => (
        <label key={optionValue(o)} class={`q-check${o.danger ? ' danger' : ''}`}>
          <input
            type={multi ? 'checkbox' : 'radio'}
            name={id}
            value={optionValue(o)}
            checked={state.picked.includes(optionValue(o))}
            onChange={(e) => toggle(optionValue(o), e.currentTarget.checked)}
          />
          <span>
            <OptionText option={o} />
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
              onChange={(e) => setOther(e.currentTarget.checked)}
            />
            <span>Other</span>
          </label>
          <input
            type="text"
            aria-label={`${label || 'Answer'}: other`}
            value={state.otherText}
            onInput={(e) => setOther(true, e.currentTarget.value)}
          />
        </div>
      )}
      <FieldError block={block} error={error} />
    </fieldset>
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
