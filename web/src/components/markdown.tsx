import DOMPurify, { type Config } from 'dompurify'
import { Marked } from 'marked'
import { useLayoutEffect, useRef, useState } from 'preact/hooks'
import { copyText, MoreButton, useCollapse } from './collapse.tsx'

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

/**
 * Issue 18: a code block gets a copy button (added after sanitizing, as the image buttons are);
 * a table scrolls sideways in its own focusable, named region, never widening the page.
 */
function frame(fragment: DocumentFragment): void {
  for (const pre of fragment.querySelectorAll('pre')) {
    const box = document.createElement('div')
    box.className = 'md-code'
    const button = document.createElement('button')
    button.type = 'button'
    button.className = 'copy-button'
    button.setAttribute('aria-label', 'Copy code')
    button.textContent = 'Copy'
    pre.replaceWith(box)
    box.append(button, pre)
  }
  for (const table of fragment.querySelectorAll('table')) {
    const box = document.createElement('div')
    box.className = 'md-table'
    box.tabIndex = 0
    box.setAttribute('role', 'region')
    box.setAttribute('aria-label', 'Table')
    table.replaceWith(box)
    box.append(table)
  }
}

export function renderMarkdown(text: string): DocumentFragment {
  const html = marked.parse(text) as string
  const fragment = DOMPurify.sanitize(html, PURIFY) as unknown as DocumentFragment
  harden(fragment)
  frame(fragment)
  return fragment
}

/** The person agreed: the button becomes the image. */
function showRemoteImage(button: HTMLButtonElement): void {
  const img = document.createElement('img')
  img.referrerPolicy = 'no-referrer'
  img.alt = button.dataset.alt ?? ''
  img.src = button.dataset.src ?? ''
  button.replaceWith(img)
}

export function Markdown({ text }: { text: string }) {
  const collapse = useCollapse<HTMLDivElement>([text])
  const [note, setNote] = useState('')
  const timer = useRef<ReturnType<typeof setTimeout>>(undefined)
  useLayoutEffect(() => {
    collapse.ref.current?.replaceChildren(renderMarkdown(text))
  }, [text])
  useLayoutEffect(() => () => clearTimeout(timer.current), [])

  /** The DOM inside is not Preact's: its buttons are handled here, by delegation. */
  const onClick = async (event: MouseEvent) => {
    const target = event.target as Element
    const image = target.closest<HTMLButtonElement>('button.remote-image')
    if (image) return showRemoteImage(image)
    const copy = target.closest<HTMLButtonElement>('.md-code > button.copy-button')
    const pre = copy?.nextElementSibling
    if (!copy || !pre) return
    const done = await copyText(pre.textContent ?? '', pre)
    copy.textContent = done ? 'Copied' : 'Copy'
    setNote(done ? 'Copied' : 'Could not copy')
    clearTimeout(timer.current)
    timer.current = setTimeout(() => {
      copy.textContent = 'Copy'
      setNote('')
    }, 2000)
  }

  return (
    <div class="md-block">
      {/* biome-ignore lint/a11y: the clicks come from real buttons inside (delegation) */}
      <div
        class={['markdown', collapse.cut].filter(Boolean).join(' ')}
        id={collapse.id}
        ref={collapse.ref}
        onClick={onClick}
      />
      <MoreButton collapse={collapse} what="message" />
      <span class="visually-hidden" role="status">
        {note}
      </span>
    </div>
  )
}
