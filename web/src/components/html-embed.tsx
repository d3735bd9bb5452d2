import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks'
import { useScheme } from '../lib/scheme.ts'

/**
 * An agent's html block, run in `/embed` inside <iframe sandbox="allow-scripts">: scripts run,
 * but in an opaque origin (no cookies, no storage, no access to this page), and the embed's
 * own CSP forbids any network request. Messages from the frame are believed only when they
 * come from this very frame's window, and `reply` is passed on only for this block's question.
 * A reply never answers anything: it only stages a value, which the question shows outside
 * the frame with its own Send button, and a later reply replaces it (question/). Nothing
 * the frame does can answer without the person's click or key press in the app.
 *
 * The frame must also stay on `/embed`. Nothing can stop a frame navigating itself, but the
 * app's CSP (`frame-src 'self'`) blocks every other origin before any request, and after every
 * load once the html is sent, the app asks the frame whether it still shows it: only the host
 * script knows the token sent with the html. Without the right answer in time the frame is
 * removed for good (which also aborts a navigation still under way) and a note takes its
 * place; it is never rendered again. See docs/decisions.md ("Web app").
 *
 * The frame is told the app's colour scheme with the html and whenever it changes, so an embed
 * without colours of its own reads well in the dark theme (docs/decisions.md, issue 18).
 */
const MAX_HEIGHT = 2000
const AUTO_START = 120
/**
 * How long the frame has to answer after a load. Generous: a busy phone (or a loaded test
 * machine) can take more than a second to run the host script, and an honest embed removed as
 * "left the page" is a broken message; a frame that did leave can reach no other origin meanwhile
 * (the app's `frame-src 'self'`), so waiting longer costs nothing but the note's delay.
 */
const CHECK_MS = 5000

export interface EmbedProps {
  html: string
  label?: string
  height?: number
  /**
   * Set only while the block is an open question: receives every reply of the embed, to stage
   * (never to send) it.
   */
  onReply?: (value: unknown) => void
}

/** Only JSON may be an answer; anything else (functions, cycles, huge values) is refused. */
function asJson(value: unknown): unknown {
  const text = JSON.stringify(value)
  if (text === undefined || text.length > 64 * 1024) throw new Error('not an answer')
  return JSON.parse(text)
}

/** getRandomValues, not randomUUID: the app may be served over plain http on a LAN. */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('')
}

interface FrameState {
  html: string
  token: string
  /** Which html the frame was given: it is sent once per frame. */
  rendered: boolean
  /** The serial number of the last question, and its deadline. */
  check: number
  timer?: ReturnType<typeof setTimeout>
}

export function HtmlEmbed({ html, label, height, onReply }: EmbedProps) {
  const frame = useRef<HTMLIFrameElement>(null)
  const fixed = height !== undefined ? Math.min(Math.max(height, 1), MAX_HEIGHT) : undefined
  const [autoHeight, setAutoHeight] = useState(AUTO_START)
  const replyRef = useRef(onReply)
  replyRef.current = onReply
  const scheme = useScheme()
  const schemeRef = useRef(scheme)
  schemeRef.current = scheme
  /** The html whose frame tried to leave: that block shows a note instead, for good. */
  const [stopped, setStopped] = useState<string | null>(null)
  const state = useRef<FrameState>({ html, token: newToken(), rendered: false, check: 0 })
  if (state.current.html !== html) {
    clearTimeout(state.current.timer)
    state.current = { html, token: newToken(), rendered: false, check: 0 }
  }

  const stop = () => {
    clearTimeout(state.current.timer)
    setStopped(html)
  }

  // The frame may finish loading before or after this component listens: the html goes on
  // whichever comes first, the frame's load event or its 'ready' message.
  const render = () => {
    const win = frame.current?.contentWindow
    const s = state.current
    if (!win || s.rendered) return
    s.rendered = true
    // The frame's origin is opaque, so '*' is the only target that reaches it.
    win.postMessage({ hark: 'render', html, token: s.token, scheme: schemeRef.current }, '*')
  }

  // The person switched theme (or the system did): the frame follows at once.
  useEffect(() => {
    if (!state.current.rendered) return
    frame.current?.contentWindow?.postMessage({ hark: 'scheme', scheme }, '*')
  }, [scheme])

  // Once the html is sent, every load is a question: the one after document.close() is
  // answered by the host script, a page the frame navigated to cannot answer.
  const onLoad = () => {
    const win = frame.current?.contentWindow
    const s = state.current
    if (!win) return
    if (!s.rendered) return render()
    clearTimeout(s.timer)
    s.check += 1
    s.timer = setTimeout(stop, CHECK_MS)
    win.postMessage({ hark: 'check', check: s.check }, '*')
  }

  // A layout effect: listening starts before the browser runs any task of the new frame.
  useLayoutEffect(() => {
    const onMessage = (event: MessageEvent) => {
      const win = frame.current?.contentWindow
      if (!win || event.source !== win) return
      const data = event.data as {
        hark?: string
        value?: unknown
        token?: unknown
        check?: unknown
      } | null
      if (!data || typeof data !== 'object') return
      const s = state.current
      if (data.hark === 'ready') {
        render()
      } else if (data.hark === 'here') {
        if (data.token === s.token && data.check === s.check) clearTimeout(s.timer)
      } else if (data.hark === 'height' && typeof data.value === 'number') {
        const next = Math.min(Math.max(Math.ceil(data.value), 24), MAX_HEIGHT)
        setAutoHeight((current) => (current === next ? current : next))
      } else if (data.hark === 'reply' && replyRef.current) {
        let value: unknown
        try {
          value = asJson(data.value)
        } catch {
          return
        }
        replyRef.current(value)
      }
    }
    window.addEventListener('message', onMessage)
    return () => {
      window.removeEventListener('message', onMessage)
      clearTimeout(state.current.timer)
    }
  }, [html])

  return (
    <figure class="b-html">
      {label && <figcaption>{label}</figcaption>}
      {stopped === html ? (
        <p class="b-html-stopped muted" role="status">
          This embed tried to leave the page and was stopped.
        </p>
      ) : (
        // Never allow-forms, allow-popups, allow-top-navigation or allow-same-origin.
        <iframe
          ref={frame}
          key={html}
          src="/embed"
          sandbox="allow-scripts"
          referrerpolicy="no-referrer"
          title={label ?? 'Embedded content from the agent'}
          onLoad={onLoad}
          style={{ height: `${fixed ?? autoHeight}px` }}
        />
      )}
    </figure>
  )
}
