import type { ComponentChildren } from 'preact'
import { Button, ErrorNote, Field } from './ui.tsx'

/** A form that runs `onSubmit` in the page: submitting never navigates. */
export function Form({
  class: cls,
  onSubmit,
  children,
}: {
  class: string
  onSubmit: () => void
  children: ComponentChildren
}) {
  return (
    <form
      class={cls}
      onSubmit={(e) => {
        e.preventDefault()
        onSubmit()
      }}
    >
      {children}
    </form>
  )
}

/**
 * One line of the settings and connect cards: a field and the button that acts on it (make an
 * invite, a token, a join link; look up a pairing code). The field's label is its aria-label
 * (the card says what it is for); `error`, when given, shows under the line.
 */
export function InlineForm({
  type = 'text',
  label,
  placeholder,
  value,
  onValue,
  action,
  busy,
  onSubmit,
  error,
  code = false,
}: {
  type?: 'text' | 'email'
  label: string
  placeholder: string
  value: string
  onValue: (value: string) => void
  /** The button's text. */
  action: string
  busy: boolean
  onSubmit: () => void
  error?: string | null
  /** A code to type as shown: capitals, and nothing for the browser to fill in. */
  code?: boolean
}) {
  // Spread rather than `type={type}`: preact's typings accept each kind of input on its own.
  const kind = type === 'email' ? ({ type: 'email' } as const) : ({ type: 'text' } as const)
  return (
    <>
      <Form class="inline-form" onSubmit={onSubmit}>
        <input
          {...kind}
          aria-label={label}
          placeholder={placeholder}
          autocapitalize={code ? 'characters' : undefined}
          autocomplete={code ? 'off' : undefined}
          value={value}
          onInput={(e) => onValue(e.currentTarget.value)}
        />
        <Button type="submit" busy={busy}>
          {action}
        </Button>
      </Form>
      {error !== undefined && <ErrorNote error={error} />}
    </>
  )
}

/**
 * A required one-line field; `type`, `autocomplete` and `inputMode` tell the browser what goes
 * in (so it may fill it in, or show a phone the right keyboard).
 */
export function RequiredField({
  label,
  type,
  autocomplete,
  inputMode,
  value,
  onValue,
}: {
  label: string
  type?: 'email'
  autocomplete: string
  inputMode?: 'numeric'
  value: string
  onValue: (value: string) => void
}) {
  // Spread, as in InlineForm: preact's typings accept each kind of input on its own.
  const kind = type === 'email' ? ({ type: 'email' } as const) : {}
  return (
    <Field label={label}>
      <input
        {...kind}
        inputMode={inputMode}
        autocomplete={autocomplete}
        required
        value={value}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </Field>
  )
}

/** The email field of logging in and signing up; the browser may fill it in. */
export const EmailField = (props: { value: string; onValue: (value: string) => void }) => (
  <RequiredField label="Email" type="email" autocomplete="email" {...props} />
)
