import type { ComponentChildren } from 'preact'

/**
 * The agent's text with its invisible characters made visible. A command can carry characters
 * that show nothing, or that reorder what is shown (bidirectional overrides: "Trojan Source"),
 * so what the person reads would differ from what runs. On an approval card each one shows as
 * a red ⟨U+202E⟩ instead, and the text around it reads in the order it is stored.
 */

// C0/C1 controls (but tab and newline), soft hyphen, bidi marks, embeddings, overrides and
// isolates, zero-width characters, word joiners and invisible operators, BOM, interlinear
// annotation, tag characters; a CR not followed by LF (one before LF is a Windows line end).
const HIDDEN =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\u{e0000}-\u{e007f}]|\r(?!\n)/gu

const codeOf = (ch: string) =>
  `U+${(ch.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`

/** Does the text hold a character Plain would mark? */
export const hasHidden = (text: string) => text.search(HIDDEN) >= 0

/** Does any string in this JSON value (keys too) hold one? */
export function anyHidden(value: unknown): boolean {
  if (typeof value === 'string') return hasHidden(value)
  if (Array.isArray(value)) return value.some(anyHidden)
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([k, v]) => hasHidden(k) || anyHidden(v))
  }
  return false
}

export function Plain({ text }: { text: string }) {
  if (!hasHidden(text)) return <>{text}</>
  const parts: ComponentChildren[] = []
  let at = 0
  for (const match of text.matchAll(HIDDEN)) {
    const i = match.index
    if (i > at) parts.push(text.slice(at, i))
    const code = codeOf(match[0])
    parts.push(
      <span key={i} class="ap-hidden" title={`An invisible character (${code}) is here`}>
        ⟨{code}⟩
      </span>,
    )
    at = i + match[0].length
  }
  if (at < text.length) parts.push(text.slice(at))
  return <>{parts}</>
}
