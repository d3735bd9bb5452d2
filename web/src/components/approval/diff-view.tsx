import { useMemo, useState } from 'preact/hooks'
import { type DiffRow, foldContext, lineDiff } from '../../lib/diff.ts'
import { ShowMore } from './parts.tsx'
import { Plain } from './plain.tsx'

/** Rows shown before "Show all": a long edit stays one screen until the person opens it. */
const FOLD_ROWS = 40

const SIGN = { same: ' ', del: '−', add: '+' } as const
const SPOKEN = { same: '', del: 'removed: ', add: 'added: ' } as const

/**
 * `before` → `after` as a line diff: removed lines red with −, added green with +, unchanged
 * runs folded to three lines of context. Lines wrap rather than scroll sideways, so a phone
 * shows a whole line; <del> and <ins> (and a spoken prefix) tell screen readers which is which.
 */
export function DiffView({ before, after }: { before: string; after: string }) {
  const diff = useMemo(() => lineDiff(before, after), [before, after])
  const rows = useMemo(() => foldContext(diff.lines), [diff])
  const [open, setOpen] = useState(false)
  const shown = open ? rows : rows.slice(0, FOLD_ROWS)
  const added = diff.lines.filter((l) => l.kind === 'add').length
  const removed = diff.lines.filter((l) => l.kind === 'del').length
  return (
    <div class="ap-diff-wrap">
      <p class="ap-diff-stat">
        <span class="ap-del-count">−{removed}</span> <span class="ap-add-count">+{added}</span>
        {!diff.exact && <span> · too long to match line by line: old text, then new</span>}
      </p>
      <div class="ap-diff">
        {shown.map((row, i) => (
          <Row key={i} row={row} />
        ))}
      </div>
      {rows.length > FOLD_ROWS && (
        <ShowMore open={open} total={rows.length} onToggle={() => setOpen(!open)} />
      )}
    </div>
  )
}

function Row({ row }: { row: DiffRow }) {
  if (row.kind === 'skip') {
    return (
      <div class="ap-line skip">
        ⋯ {row.count} unchanged {row.count === 1 ? 'line' : 'lines'}
      </div>
    )
  }
  const content = (
    <>
      <span class="ap-sign" aria-hidden="true">
        {SIGN[row.kind]}
      </span>
      <span class="visually-hidden">{SPOKEN[row.kind]}</span>
      <span class="ap-text">{row.text === '' ? '\u00a0' : <Plain text={row.text} />}</span>
    </>
  )
  if (row.kind === 'del') return <del class="ap-line del">{content}</del>
  if (row.kind === 'add') return <ins class="ap-line add">{content}</ins>
  return <div class="ap-line same">{content}</div>
}
