import type { Pin } from '../../messages/pin-schema.ts'
import type { Message } from '../../messages/schema.ts'

/** One-line human views of records; `--json` prints the records themselves. */

const pad = (n: number) => String(n).padStart(2, '0')

/** Local time, minute precision: `2025-05-01 14:03`. */
export function shortTime(ms: number): string {
  const d = new Date(ms)
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`
}

/** The words of a body: title and text, and how many blocks beside them. */
export function summary(message: Message): string {
  const { title, text, blocks } = message.body
  const words = [title, text].filter((s) => s !== undefined && s !== '').join(': ')
  const extra = blocks?.length ? `[${blocks.length} block${blocks.length === 1 ? '' : 's'}]` : ''
  return [words, extra].filter(Boolean).join(' ')
}

export const messageLine = (m: Message) =>
  `${m.id}  ${shortTime(m.created_at)}  ${summary(m)}${m.state ? `  (${m.state})` : ''}`

export const pinLine = (p: Pin) => `${p.key}  ${summary(p.message)}`
