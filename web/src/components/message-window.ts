import { useLayoutEffect, useRef, useState } from 'preact/hooks'

/**
 * A long thread keeps only the messages near the screen mounted (issue 18: scrolling a
 * 1,000-message thread on a phone-class CPU). With hundreds mounted, every frame of a scroll
 * paid for style, layout and content-visibility's intersection checks over all of them, and
 * every arriving page for their resize observers (bench/README.md, "The web app"). Spacers
 * above and below stand in for the rest, each as tall as the messages it replaces: their sizes
 * measured while mounted (a resize observer, so no forced layout), or an estimate before.
 *
 * Up to `WINDOW_FROM` loaded messages are all mounted, as before: that costs little, and the
 * browser's find-in-page and a screen reader's reading then cover the whole of a usual thread.
 */
export const WINDOW_FROM = 150
/**
 * Pixels of messages mounted beyond each edge of the list's visible part. The window moves
 * only when fewer than `MARGIN` are left on a side or more than `3 * OVERSCAN`: a scroll of a
 * few pixels re-renders nothing, and the thread re-renders about once a screenful.
 */
const OVERSCAN = 1000
const MARGIN = 300
/** What a message not measured yet is taken to need (with its gap): about a short one. */
const ESTIMATE = 140

/** A message to mount (its index), or a spacer standing in for those between. */
export type WindowPart = number | { key: string; height: number }

export interface MessageWindow {
  /** In the thread's order: the messages mounted and the spacers between them. */
  parts: WindowPart[]
  /** Changes whenever other messages are mounted: effects that look for one depend on it. */
  key: string
  /** The list scrolled: mount what is now near the screen. */
  onScroll(): void
  /** Mount `id` and a screenful around it (a link's message, the "New messages" divider). */
  reveal(id: string): void
}

interface Range {
  first?: string
  /** null: to the newest, so what arrives at the end is mounted at once. */
  last: string | null
}

const ALL: Range = { last: null }

/**
 * A thread's first page shows its newest messages first, the rest of the page a frame later:
 * the newest message is on screen once these are rendered (about a phone's screenful), not
 * all 50 (bench/web-speed.ts: "newest message visible").
 */
const FIRST_SCREEN = 15

/**
 * `kept`: messages mounted wherever the list is scrolled (open questions: a half-filled answer
 * lives in its form, which unmounting would lose).
 */
export function useMessageWindow(
  list: { current: HTMLElement | null },
  ids: string[],
  kept: Set<string>,
): MessageWindow {
  const [range, setRange] = useState<Range>(ALL)
  /** The first page has been rendered whole (see `FIRST_SCREEN`). */
  const [whole, setWhole] = useState(false)
  const heights = useRef(new Map<string, number>())
  const gap = useRef(0)
  const current = useRef(ids)
  current.current = ids
  const windowed = ids.length > WINDOW_FROM
  /** The indices mounted at the last render. */
  const mounted = useRef({ start: 0, end: ids.length })

  const height = (id: string) => heights.current.get(id) ?? ESTIMATE
  const set = (next: Range) =>
    setRange((now) => (now.first === next.first && now.last === next.last ? now : next))

  /** The range that covers the list's visible part and `OVERSCAN` around it. */
  const fromScroll = (force?: boolean) => {
    const el = list.current
    const all = current.current
    if (!el || all.length <= WINDOW_FROM) return set(ALL)
    const view = el.scrollTop
    const viewEnd = view + el.clientHeight
    const now = mounted.current
    if (now.end > now.start && now.end <= all.length && force !== true) {
      let from = 0
      for (let i = 0; i < now.start; i++) from += height(all[i] as string)
      let to = from
      for (let i = now.start; i < now.end; i++) to += height(all[i] as string)
      const covered =
        (now.start === 0 || from <= view - MARGIN) &&
        (now.end === all.length || to >= viewEnd + MARGIN)
      const far = from < view - 3 * OVERSCAN || to > viewEnd + 3 * OVERSCAN
      if (covered && !far) return
    }
    const top = view - OVERSCAN
    const bottom = viewEnd + OVERSCAN
    let y = 0
    let start = -1
    let end = all.length
    for (let i = 0; i < all.length; i++) {
      if (y > bottom) {
        end = i
        break
      }
      y += height(all[i] as string)
      if (start < 0 && y > top) start = i
    }
    if (start < 0) start = Math.max(0, all.length - 1)
    set({ first: all[start], last: end >= all.length ? null : (all[end - 1] as string) })
  }

  // Sizes come from one resize observer on the mounted messages: it reports after layout, so
  // measuring never forces one, and a block that opens or an image that loads is seen too.
  const observer = useRef<ResizeObserver>(undefined)
  const observed = useRef(new Set<Element>())
  useLayoutEffect(() => {
    const el = list.current
    if (!el) return
    observer.current ??= new ResizeObserver((entries) => {
      if (!gap.current) gap.current = Number.parseFloat(getComputedStyle(el).rowGap) || 12
      let smaller = false
      for (const entry of entries) {
        const article = entry.target as HTMLElement
        const id = article.dataset.id
        if (!id || !article.isConnected) continue
        // A "New messages" divider just above belongs to its message's share of the height.
        const divider = article.previousElementSibling
        const extra = divider?.classList.contains('new-divider')
          ? (divider as HTMLElement).offsetHeight + gap.current
          : 0
        const size = entry.borderBoxSize[0]?.blockSize ?? article.offsetHeight
        const next = size + gap.current + extra
        if (next < height(id)) smaller = true // than thought: more may fit in the window
        heights.current.set(id, next)
      }
      if (smaller && current.current.length > WINDOW_FROM) fromScroll()
    })
    const seen = observed.current
    for (const article of el.querySelectorAll<HTMLElement>('article[data-id]')) {
      if (seen.has(article) || article.closest('.pins')) continue
      seen.add(article)
      observer.current.observe(article)
    }
    for (const article of seen) {
      if (article.isConnected) continue
      seen.delete(article)
      observer.current.unobserve(article)
    }
  })
  useLayoutEffect(() => () => observer.current?.disconnect(), [])

  // The rest of the first page once its newest messages are painted (a timer set in a frame
  // runs after that frame's paint).
  const first = !whole && ids.length > 0
  useLayoutEffect(() => {
    if (!first) return
    let timer: ReturnType<typeof setTimeout> | undefined
    const frame = requestAnimationFrame(() => {
      timer = setTimeout(() => setWhole(true))
    })
    return () => {
      cancelAnimationFrame(frame)
      clearTimeout(timer)
    }
  }, [first])

  // New messages, or a page of older ones in front: after the thread has put the scroll where
  // it belongs (its effects run first), mount what is near it.
  useLayoutEffect(() => {
    if (windowed) fromScroll(true)
    else set(ALL)
  }, [ids, windowed])

  let start = 0
  let end = ids.length
  if (windowed) {
    const s = range.first === undefined ? -1 : ids.indexOf(range.first)
    const e = range.last === null ? ids.length : ids.indexOf(range.last) + 1
    if (s >= 0 && e > s) {
      start = s
      end = e
    } else {
      // Not placed yet (the thread just grew past the bound, or an edge of the window was
      // deleted): the newest, until the effect below places it from the scroll, before paint.
      start = Math.max(0, ids.length - Math.ceil((2 * OVERSCAN) / ESTIMATE))
    }
  } else if (!whole) start = Math.max(0, ids.length - FIRST_SCREEN)
  mounted.current = { start, end }
  const parts: WindowPart[] = []
  let run = 0
  let runFrom = ''
  // Each spacer is followed by the list's gap, which the heights already count.
  const flush = () => {
    if (run > 0) parts.push({ key: `gap-${runFrom}`, height: run - (gap.current || 12) })
    run = 0
  }
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as string
    if ((i >= start && i < end) || kept.has(id)) {
      flush()
      parts.push(i)
    } else {
      if (run === 0) runFrom = id
      run += height(id)
    }
  }
  flush()
  return {
    parts,
    key: `${ids[start] ?? ''}-${ids[end - 1] ?? ''}`,
    onScroll: () => {
      if (current.current.length > WINDOW_FROM) fromScroll()
    },
    reveal(id: string) {
      const all = current.current
      const i = all.indexOf(id)
      if (i < 0) return
      if (all.length <= WINDOW_FROM) return setWhole(true)
      const after = i + Math.ceil(OVERSCAN / ESTIMATE)
      set({
        first: all[Math.max(0, i - 3)],
        last: after >= all.length - 1 ? null : (all[after] as string),
      })
    },
  }
}
