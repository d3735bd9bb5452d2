import type { ButtonHTMLAttributes, ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { errorText } from '../lib/api.ts'

/** The app's few building blocks, so every screen looks and behaves the same. */

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: 'primary' | 'danger' | 'quiet'
  busy?: boolean
}

export function Button({ variant, busy, children, class: cls, disabled, ...rest }: ButtonProps) {
  return (
    <button
      type="button"
      class={['btn', variant, cls].filter(Boolean).join(' ')}
      disabled={disabled || busy}
      aria-busy={busy || undefined}
      {...rest}
    >
      {children}
    </button>
  )
}

/**
 * Runs an async action for a button: busy while it runs, the error shown beside it.
 * Returns [run, busy, error, setError].
 */
export function useAction<A extends unknown[]>(
  action: (...args: A) => Promise<unknown>,
): [(...args: A) => Promise<void>, boolean, string | null, (e: string | null) => void] {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const run = async (...args: A) => {
    setBusy(true)
    setError(null)
    try {
      await action(...args)
    } catch (e) {
      setError(errorText(e))
    } finally {
      setBusy(false)
    }
  }
  return [run, busy, error, setError]
}

export function ErrorNote({ error }: { error: string | null | undefined }) {
  if (!error) return null
  return (
    <p class="error-note" role="alert">
      {error}
    </p>
  )
}

export function Field({
  label,
  hint,
  children,
}: {
  label: string
  hint?: ComponentChildren
  children: ComponentChildren
}) {
  return (
    // biome-ignore lint/a11y/noLabelWithoutControl: the control is the child
    <label class="field">
      <span class="field-label">{label}</span>
      {children}
      {hint && <span class="field-hint">{hint}</span>}
    </label>
  )
}

/** Text the person will paste elsewhere (a command, a token, a link), with a copy button. */
export function CopyText({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setCopied(true)
      setTimeout(() => setCopied(false), 2000)
    } catch {
      // No clipboard (an insecure origin): the text is selectable all the same.
    }
  }
  return (
    <div class="copy-text">
      <code>{text}</code>
      <Button variant="quiet" onClick={copy} aria-label={`Copy ${label}`}>
        {copied ? 'Copied' : 'Copy'}
      </Button>
    </div>
  )
}

export function Spinner({ label = 'Loading' }: { label?: string }) {
  return (
    <div class="spinner" role="status">
      <span class="visually-hidden">{label}</span>
    </div>
  )
}

export function Card({ children, class: cls }: { children: ComponentChildren; class?: string }) {
  return <div class={`card ${cls ?? ''}`}>{children}</div>
}
