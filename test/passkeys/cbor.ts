/**
 * Just enough CBOR (RFC 8949) to build what an authenticator sends: unsigned and negative
 * integers, byte and text strings, arrays and maps (in the insertion order given, which is
 * the canonical order for the small keys WebAuthn uses).
 */
export type CborValue = number | string | Uint8Array | CborValue[] | Map<number | string, CborValue>

function head(major: number, length: number): number[] {
  const m = major << 5
  if (length < 24) return [m | length]
  if (length < 0x100) return [m | 24, length]
  if (length < 0x10000) return [m | 25, length >> 8, length & 0xff]
  return [
    m | 26,
    (length >>> 24) & 0xff,
    (length >> 16) & 0xff,
    (length >> 8) & 0xff,
    length & 0xff,
  ]
}

export function encodeCbor(value: CborValue): Uint8Array {
  const out: number[] = []
  const write = (v: CborValue): void => {
    if (typeof v === 'number') {
      if (!Number.isInteger(v)) throw new Error('only integers are supported')
      out.push(...(v >= 0 ? head(0, v) : head(1, -1 - v)))
    } else if (typeof v === 'string') {
      const bytes = new TextEncoder().encode(v)
      out.push(...head(3, bytes.length), ...bytes)
    } else if (v instanceof Uint8Array) {
      out.push(...head(2, v.length), ...v)
    } else if (Array.isArray(v)) {
      out.push(...head(4, v.length))
      for (const item of v) write(item)
    } else {
      out.push(...head(5, v.size))
      for (const [key, item] of v) {
        write(key)
        write(item)
      }
    }
  }
  write(value)
  return new Uint8Array(out)
}
