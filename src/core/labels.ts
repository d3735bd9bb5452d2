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

/** Longest host name a pairing keeps (a DNS name is at most 253 characters). */
export const HOST_MAX_CHARS = 253

/**
 * A machine's host name as `hark init` sends it, trimmed, else 400 naming `host`. No control or
 * invisible formatting characters: the person reads it to decide whether to approve, and a
 * right-to-left override could make it read as another name.
 */
export function cleanHost(raw: unknown): string {
  if (typeof raw !== 'string') throw fail.invalid('host', 'must be a string')
  const host = raw.trim()
  if (host.length < 1 || host.length > HOST_MAX_CHARS) {
    throw fail.invalid('host', `must be 1 to ${HOST_MAX_CHARS} characters`)
  }
  if (/[\p{Cc}\p{Cf}]/u.test(host)) {
    throw fail.invalid('host', 'must not contain control or formatting characters')
  }
  return host
}
