import { fail } from './errors.ts'

/** Longest a long-poll is held, in seconds; larger `wait`s are treated as this. */
export const MAX_WAIT_SECONDS = 55

/** `wait` → milliseconds. Absent means no wait; anything but a non-negative number is 400. */
export function parseWait(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0
  const n = Number(raw)
  // Plain decimal notation only: no sign, no hex, no "Infinity".
  if (!/^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(raw) || !Number.isFinite(n)) {
    throw fail.invalid('wait', 'must be a non-negative number of seconds')
  }
  return Math.round(Math.min(n, MAX_WAIT_SECONDS) * 1000)
}

/** `since` → a cursor. Start with 0; it is the `cursor` of the previous answer. */
export function parseCursor(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 0
  if (!/^\d{1,15}$/.test(raw))
    throw fail.invalid('since', 'must be a cursor (a non-negative integer)')
  return Number(raw)
}

export function parseFlag(name: string, raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === '0' || raw === 'false') return false
  if (raw === '1' || raw === 'true') return true
  throw fail.invalid(name, 'must be 1 or 0')
}

export function parseChoice<const T extends string>(
  name: string,
  raw: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (raw === undefined || raw === '') return undefined
  if ((allowed as readonly string[]).includes(raw)) return raw as T
  throw fail.invalid(name, `must be one of ${allowed.join(', ')}`)
}

export function parseLimit(raw: string | undefined, fallback: number, max: number): number {
  if (raw === undefined || raw === '') return fallback
  if (!/^\d{1,6}$/.test(raw) || Number(raw) < 1) {
    throw fail.invalid('limit', `must be an integer from 1 to ${max}`)
  }
  return Math.min(Number(raw), max)
}
