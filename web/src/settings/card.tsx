import type { ComponentChildren } from 'preact'
import { Button } from '../components/ui.tsx'

/** One card of the settings page: its heading names it, and `id` is its link (`#id`). */
export function SettingsCard({
  id,
  title,
  children,
}: {
  id: string
  title: string
  children: ComponentChildren
}) {
  return (
    <section class="card stack" aria-labelledby={id}>
      <h2 id={id}>{title}</h2>
      {children}
    </section>
  )
}

/** A row of a settings list: what it is, a muted line about it, then its buttons. */
export function ListRow({
  title,
  detail,
  children,
}: {
  title: ComponentChildren
  detail: ComponentChildren
  children?: ComponentChildren
}) {
  return (
    <li>
      <div>
        <strong>{title}</strong>
        <span class="muted">{detail}</span>
      </div>
      {children}
    </li>
  )
}

/**
 * One of a row's buttons: the verb shown, and for a screen reader the verb and the row's name
 * ("Remove Pixel 8"), since every row has the same buttons.
 */
export function RowAction({
  verb,
  of,
  onClick,
}: {
  verb: string
  of: string
  onClick: () => void
}) {
  return (
    <Button variant="quiet" onClick={onClick} aria-label={`${verb} ${of}`}>
      {verb}
    </Button>
  )
}
