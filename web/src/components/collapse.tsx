import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks'

/**
 * Long content (issue 18): a code block, a log, a table or a long markdown block is cut to
 * `COLLAPSED` pixels with a fade and a "Show more" button, so one message cannot bury the
 * thread. Only content taller than `LONGER_THAN` is cut: folding away a line or two would cost
 * a click for nothing. Both sizes are the stylesheet's (`.collapsed` in long-content.css).
 */
export const COLLAPSED = 352
const LONGER_THAN = 448

/**
 * The thread follows its newest message while the person is at the bottom; opening a block
 * there would then jump to the block's end. This event (bubbling from the block) tells the
 * thread the person is reading here instead.
 */
export const READING_EVENT = 'hark-reading'

export interface Collapse<T extends HTMLElement> {
  ref: { current: T | null }
  id: string
  /** Taller than the cut: a button shows or hides the rest. */
  long: boolean
  open: boolean
  /** Wider than its box: it scrolls sideways, so it takes keyboard focus. */
  wide: boolean
  /** The class for the cut element: `collapsed` while it is cut. */
  cut: string | undefined
  toggle(): void
}

/**
 * One resize observer for every block: its one callback measures all that changed before any
 * re-renders (Preact renders in a microtask after it). An observer each re-rendered between
 * callbacks, so the next block's reading forced a layout of the thread again.
 */
const measures = new Map<Element, () => void>()
let observer: ResizeObserver | undefined
function observe(el: Element, measure: () => void): () => void {
  observer ??= new ResizeObserver((entries) => {
    for (const entry of entries) measures.get(entry.target)?.()
  })
  measures.set(el, measure)
  observer.observe(el)
  return () => {
    measures.delete(el)
    observer?.unobserve(el)
  }
}

/**
 * Measures `ref`'s element again whenever `deps` change and whenever its box resizes. Only in
 * the resize observer's callback, which also reports once when observing starts: it runs after
 * layout, so reading sizes there costs nothing, where reading them as the block mounts forced a
 * layout of the whole thread per block (bench/README.md, "The web app"). Content put in by hand
 * in a layout effect after this one (the markdown block) is in place by then.
 */
export function useCollapse<T extends HTMLElement>(deps: unknown[]): Collapse<T> {
  const ref = useRef<T>(null)
  const id = useId()
  const [size, setSize] = useState({ long: false, wide: false })
  const [open, setOpen] = useState(false)
  const measure = () => {
    const el = ref.current
    if (!el) return
    // scrollHeight is the whole content's height, cut or not.
    const next = { long: el.scrollHeight > LONGER_THAN, wide: el.scrollWidth > el.clientWidth + 1 }
    setSize((now) => (now.long === next.long && now.wide === next.wide ? now : next))
  }
  useLayoutEffect(() => {
    const el = ref.current
    if (!el) return
    // A narrower screen wraps text into more lines; an image inside loads later.
    return observe(el, measure)
  }, deps)
  const toggle = () => {
    const el = ref.current
    if (!open) el?.dispatchEvent(new CustomEvent(READING_EVENT, { bubbles: true }))
    setOpen(!open)
    // Closing a block read to its end leaves its button far below: bring the block's top back.
    if (open && el) requestAnimationFrame(() => revealTop(el))
  }
  return {
    ref,
    id,
    long: size.long,
    open,
    wide: size.wide,
    cut: size.long && !open ? 'collapsed' : undefined,
    toggle,
  }
}

/** Scrolls the element's own list (never the page, whose header must stay) to its top. */
function revealTop(el: Element) {
  const scroller = el.closest('.messages, .pins')
  if (!scroller) return
  const gap = el.getBoundingClientRect().top - scroller.getBoundingClientRect().top
  if (gap < 0) scroller.scrollTop += gap - 8
}

/** The "Show more" / "Show less" button under a cut block; nothing for a short one. */
export function MoreButton<T extends HTMLElement>({
  collapse,
  what,
}: {
  collapse: Collapse<T>
  /** What is cut, for screen readers: "code", "table", "message". */
  what: string
}) {
  if (!collapse.long) return null
  return (
    <button
      type="button"
      class="more"
      aria-expanded={collapse.open}
      aria-controls={collapse.id}
      aria-label={`${collapse.open ? 'Show less' : 'Show more'} of this ${what}`}
      onClick={collapse.toggle}
    >
      {collapse.open ? 'Show less' : 'Show more'}
    </button>
  )
}

/**
 * Copies text to the clipboard. navigator.clipboard needs a secure origin; on plain http (a
 * LAN install) the old copy command on a selection still works.
 */
export async function copyText(text: string, source?: Element | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    if (!source) return false
    const range = document.createRange()
    range.selectNodeContents(source)
    const selection = getSelection()
    selection?.removeAllRanges()
    selection?.addRange(range)
    const done = document.execCommand('copy')
    selection?.removeAllRanges()
    return done
  }
}

/** A code block's copy button: it reads "Copied" for a moment, and a status line says so. */
export function CopyButton({
  text,
  source,
  label = 'Copy code',
}: {
  text: string
  source: { current: Element | null }
  label?: string
}) {
  const [note, setNote] = useState('')
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined)
  const copy = async () => {
    const done = await copyText(text, source.current)
    setNote(done ? 'Copied' : 'Could not copy')
    clearTimeout(timer.current)
    timer.current = setTimeout(() => setNote(''), 2000)
  }
  return (
    <span class="copy-code">
      <span class="visually-hidden" role="status">
        {note}
      </span>
      <button type="button" class="copy-button" aria-label={label} onClick={copy}>
        {note === 'Copied' ? 'Copied' : 'Copy'}
      </button>
    </span>
  )
}
