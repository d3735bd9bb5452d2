import { useLayoutEffect, useRef, useState } from 'preact/hooks'

/**
 * An agent's html block, run in `/embed` inside <iframe sandbox="allow-scripts">: scripts run,
 * but in an opaque origin (no cookies, no storage, no access to this page), and the embed's
 * own CSP forbids any network request. Messages from the frame are believed only when they
 * come from this very frame's window, and `reply` is taken once, for this block's question.
 */
const MAX_HEIGHT = 2000
const AUTO_START = 120

export interface EmbedProps {
  html: string
  label?: string
  height?: number
  /** Set when the block is an open question: receives the embed's reply, once. */
  onReply?: (value: unknown) => void
}

/** Only JSON may be an answer; anything else (functions, cycles, huge values) is refused. */
function asJson(value: unknown): unknown {
  const text = JSON.stringify(value)
  if (text === undefined || text.length > 64 * 1024) throw new Error('not an answer')
  return JSON.parse(text)
}

export function HtmlEmbed({ html, label, height, onReply }: EmbedProps) {
  const frame = useRef<HTMLIFrameElement>(null)
  const fixed = height !== undefined ? Math.min(Math.max(height, 1), MAX_HEIGHT) : undefined
  const [autoHeight, setAutoHeight] = useState(AUTO_START)
  const replyRef = useRef(onReply)
  replyRef.current = onReply
  /** Which html the frame was given: it is sent once per frame. */
  const rendered = useRef<string | null>(null)

  // The frame may finish loading before or after this component listens: the html goes on
  // whichever comes first, the frame's load event or its 'ready' message.
  const render = () => {
    const win = frame.current?.contentWindow
    if (!win || rendered.current === html) return
    rendered.current = html
    // The frame's origin is opaque, so '*' is the only target that reaches it.
    win.postMessage({ hark: 'render', html }, '*')
  }

  // A layout effect: listening starts before the browser runs any task of the new frame.
  useLayoutEffect(() => {
    let replied = false
    const onMessage = (event: MessageEvent) => {
      const win = frame.current?.contentWindow
      if (!win || event.source !== win) return
      const data = event.data as { hark?: string; value?: unknown } | null
      if (!data || typeof data !== 'object') return
      if (data.hark === 'ready') {
        render()
      } else if (data.hark === 'height' && typeof data.value === 'number') {
        const next = Math.min(Math.max(Math.ceil(data.value), 24), MAX_HEIGHT)
        setAutoHeight((current) => (current === next ? current : next))
      } else if (data.hark === 'reply' && !replied && replyRef.current) {
        let value: unknown
        try {
          value = asJson(data.value)
        } catch {
          return
        }
        replied = true
        replyRef.current(value)
      }
    }
    window.addEventListener('message', onMessage)
    return () => window.removeEventListener('message', onMessage)
  }, [html])

  return (
    <figure class="b-html">
      {label && <figcaption>{label}</figcaption>}
      <iframe
        ref={frame}
        key={html}
        src="/embed"
        sandbox="allow-scripts"
        referrerpolicy="no-referrer"
        title={label ?? 'Embedded content from the agent'}
        onLoad={render}
        style={{ height: `${fixed ?? autoHeight}px` }}
      />
    </figure>
  )
}
