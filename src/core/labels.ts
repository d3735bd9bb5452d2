import { fail } from './errors.ts'

/** Longest label: an agent's, a token's, a passkey's. */
export const LABEL_MAX_CHARS = 100

/** A label as given, trimmed: 1 to LABEL_MAX_CHARS characters, else 400 naming `field`. */
export function cleanLabel(raw: unknown, field = 'label'): string {
  if (typeof raw !== 'string') throw fail.invalid(field, 'must be a string')
  const label = raw.trim()
  if (label.length < 1 || label.length > LABEL_MAX_CHARS) {
    throw fail.invalid(field, `must be 1 to ${LABEL_MAX_CHARS} characters`)
  }
  return label
}
