import { useState } from 'preact/hooks'
import { useMedia } from '../lib/scheme.ts'
import type { Block, Message } from '../lib/types.ts'
import { MessageView } from './message.tsx'

/**
 * The pinned status messages above a thread. On a wide screen they show in full (a list of
 * their own, at most 40% of the height). On a phone that would leave little room for the
 * conversation (issue 18), so they show as a compact strip, one line a pin, with a button to
 * show them in full and to fold them again. A link to a pinned message shows them in full.
 */
const NARROW = '(max-width: 899px)'
/** Lines the strip shows at most; the button says how many pins there are in all. */
const STRIP_LINES = 3

export function Pins({
  pins,
  onChange,
  focused,
  focus,
}: {
  pins: Message[]
  onChange: (m: Message) => void
  /** The pinned message a link pointed at, once it is scrolled to (marked). */
  focused?: string
  /** The message a link points at: when it is a pin, the pins show in full to show it. */
  focus?: string
}) {
  const narrow = useMedia(NARROW)
  const [open, setOpen] = useState(false)
  const full = !narrow || open || pins.some((m) => m.id === focus)
  const list = full ? (
    pins.map((m) => (
      <MessageView key={m.id} message={m} onChange={onChange} focused={m.id === focused} />
    ))
  ) : (
    <ul class="pin-strip">
      {pins.slice(0, STRIP_LINES).map((m) => (
        <PinLine key={m.id} message={m} />
      ))}
    </ul>
  )
  return (
    <section
      class={['pins', narrow && 'pins-narrow', narrow && !full && 'pins-compact']
        .filter(Boolean)
        .join(' ')}
      aria-label="Pinned"
    >
      {narrow && (
        <div class="pins-bar">
          <span class="pins-count">{pins.length === 1 ? '1 pinned' : `${pins.length} pinned`}</span>
          <button
            type="button"
            class="btn quiet pins-toggle"
            aria-expanded={full}
            aria-controls="pins-list"
            onClick={() => setOpen(!full)}
          >
            {full ? 'Show less' : 'Show all'}
          </button>
        </div>
      )}
      <div id="pins-list" class="pins-list">
        {list}
      </div>
    </section>
  )
}

/**
 * One pin in one line: its title, then what its text and blocks say in short; a pin with
 * progress has a thin bar under its line, the amount seen at a glance (its first progress).
 */
function PinLine({ message }: { message: Message }) {
  const { title } = message.body
  const summary = summarize(message)
  const progress = (message.body.blocks ?? []).find((b) => b.type === 'progress')
  return (
    <li class={`pin-line${progress ? ' has-bar' : ''}`}>
      <span class="pin-text">
        {title && <span class="msg-title">{title}</span>}
        {summary && <span class="pin-summary">{summary}</span>}
        {!title && !summary && <span class="pin-summary">Pinned message</span>}
      </span>
      {progress && <PinBar block={progress} label={title || 'Progress'} />}
    </li>
  )
}

/** The bar: the line above says the numbers, so screen readers hear it named by the pin. */
function PinBar({ block, label }: { block: Block; label: string }) {
  const max = typeof block.max === 'number' && block.max > 0 ? block.max : 100
  const value = Math.min(Math.max(typeof block.value === 'number' ? block.value : 0, 0), max)
  return <progress class="pin-bar" value={value} max={max} aria-label={label} />
}

const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '')

/** The text, then each block that says something in a few words (progress, a heading, …). */
function summarize(message: Message): string {
  const parts: string[] = []
  if (message.body.text) parts.push(message.body.text)
  for (const block of (message.body.blocks ?? []) as Block[]) {
    if (block.type === 'progress') {
      const max = typeof block.max === 'number' ? block.max : undefined
      const value = typeof block.value === 'number' ? block.value : 0
      const amount = max ? `${value} / ${max}` : `${Math.round(value)}%`
      parts.push(`${str(block.label) || 'Progress'} ${amount}`)
    } else if (block.type === 'heading' || block.type === 'markdown') {
      // Markdown in a line: its plain words are enough to recognise it.
      parts.push(str(block.text).replace(/[#*_`>[\]()]/g, ''))
    } else if (block.type === 'keyvalue' && Array.isArray(block.items)) {
      for (const item of block.items as { key: unknown; value: unknown }[]) {
        parts.push(`${str(item.key)}: ${str(item.value)}`)
      }
    }
  }
  return parts.join(' · ').replace(/\s+/g, ' ').trim()
}
