/**
 * `Range: bytes=...` on a download (RFC 9110 §14). One range is served (206); several, a
 * malformed header, or an `If-Range` naming another version get the whole file (200), as the
 * RFC allows; a range wholly past the end is 416.
 */
export type RangeAnswer =
  | { kind: 'whole' }
  | { kind: 'partial'; start: number /** exclusive */; end: number }
  | { kind: 'unsatisfiable' }

export function rangeOf(
  header: string | null | undefined,
  ifRange: string | null | undefined,
  etag: string,
  size: number,
): RangeAnswer {
  if (!header) return { kind: 'whole' }
  // A client resuming a download it began on other bytes must get the whole file again.
  if (ifRange && ifRange.trim() !== etag) return { kind: 'whole' }
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header)
  if (!m) return { kind: 'whole' }
  const [, first = '', last = ''] = m
  if (first === '' && last === '') return { kind: 'whole' }
  if (first === '') {
    // `bytes=-N`: the last N bytes.
    const n = Number(last)
    if (n === 0 || size === 0) return { kind: 'unsatisfiable' }
    return { kind: 'partial', start: Math.max(0, size - n), end: size }
  }
  const start = Number(first)
  if (start >= size) return { kind: 'unsatisfiable' }
  const end = last === '' ? size : Math.min(size, Number(last) + 1)
  if (end <= start) return { kind: 'whole' }
  return { kind: 'partial', start, end }
}
