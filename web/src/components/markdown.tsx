import DOMPurify, { type Config } from 'dompurify'
import { Marked } from 'marked'
import { useEffect, useRef } from 'preact/hooks'

/**
 * Agent-written markdown, made safe: marked renders it, DOMPurify keeps plain HTML only (no
 * scripts, handlers, styles, forms or SVG), links may only be http(s) or mailto and open in a
 * new tab without a referrer, and remote images wait for the person's consent (loading one
 * tells its server that the message was read).
 */
const SAFE_URL = /^(?:https?:|mailto:)/i

/**
 * Raw HTML inside markdown keeps only a few formatting tags, without attributes; every other
 * tag shows as text. DOMPurify would remove the rest anyway, but it parses first, and parsing
 * `<img onerror>` or `<style>` (even into its inert document) makes the browser report CSP
 * violations: cleaner that such markup never reaches a parser.
 */
const SAFE_TAG =
  /^<\/?(?:b|i|em|strong|s|del|ins|mark|small|sub|sup|kbd|code|br|hr|p|details|summary|ul|ol|li|blockquote|pre)\s*\/?>$/i

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

const marked = new Marked({ async: false, gfm: true, breaks: true }).use({
  renderer: {
    html: ({ text }) =>
      text
        .split(/(<[^<>]*>)/)
        .map((part) => (SAFE_TAG.test(part) ? part : escapeHtml(part)))
        .join(''),
  },
})

const PURIFY: Config & { RETURN_DOM_FRAGMENT: true } = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: ['style', 'form', 'input', 'button', 'textarea', 'select', 'option'],
  FORBID_ATTR: ['style', 'class', 'id', 'srcset'],
  ALLOWED_URI_REGEXP: SAFE_URL,
  RETURN_DOM_FRAGMENT: true,
}

function hostOf(url: string): string {
  try {
    return new URL(url).host
  } catch {
    return url
  }
}

/** Links open safely; images from elsewhere become a button that asks first. */
function harden(fragment: DocumentFragment): void {
  for (const a of fragment.querySelectorAll('a')) {
    const href = a.getAttribute('href')
    if (!href || !SAFE_URL.test(href)) {
      a.removeAttribute('href')
      continue
    }
    a.setAttribute('target', '_blank')
    a.setAttribute('rel', 'noopener noreferrer')
  }
  for (const img of fragment.querySelectorAll('img')) {
    const src = img.getAttribute('src') ?? ''
    if (src.startsWith('data:image/')) continue
    if (!/^https?:/i.test(src)) {
      img.remove()
      continue
    }
    const button = document.createElement('button')
    button.type = 'button'
    button.className = 'remote-image'
    button.dataset.src = src
    button.dataset.alt = img.getAttribute('alt') ?? ''
    button.textContent = `Show image from ${hostOf(src)}${img.alt ? `: ${img.alt}` : ''}`
    img.replaceWith(button)
  }
}

export function renderMarkdown(text: string): DocumentFragment {
  const html = marked.parse(text) as string
  const fragment = DOMPurify.sanitize(html, PURIFY) as unknown as DocumentFragment
  harden(fragment)
  return fragment
}

/** The person agreed: the button becomes the image. */
function showRemoteImage(event: MouseEvent): void {
  const button = (event.target as Element).closest('button.remote-image') as HTMLButtonElement
  if (!button) return
  const img = document.createElement('img')
  img.referrerPolicy = 'no-referrer'
  img.alt = button.dataset.alt ?? ''
  img.src = button.dataset.src ?? ''
  button.replaceWith(img)
}

export function Markdown({ text }: { text: string }) {
  const ref = useRef<HTMLDivElement>(null)
  useEffect(() => {
    ref.current?.replaceChildren(renderMarkdown(text))
  }, [text])
  // biome-ignore lint/a11y: the clicks come from real buttons inside (delegation)
  return <div class="markdown" ref={ref} onClick={showRemoteImage} />
}
