/**
 * The keys a browser's push subscription gives (RFC 8291): `p256dh`, the device's P-256 public
 * key as an uncompressed point, and `auth`, a 16-byte secret, both base64url. Checked at
 * subscribe, so a key nothing can be encrypted to (an all-zero "point", say) is refused there
 * instead of being stored and failing, with retries, at every push.
 */

const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

/** The bytes of a base64url string, or undefined when it is not one. */
function base64url(value: string): Uint8Array<ArrayBuffer> | undefined {
  if (!BASE64URL.test(value)) return undefined
  const unpadded = value.replace(/=+$/, '')
  if (unpadded.length % 4 === 1) return undefined // no byte count encodes to this length
  return Uint8Array.from(Buffer.from(unpadded, 'base64url'))
}

const canonical = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')

/**
 * `p256dh` in canonical base64url, or undefined unless it is 65 bytes, 0x04 then X and Y, and
 * a point on the curve: WebCrypto's import refuses any other (Bun's included: an all-zero key,
 * a flipped bit of Y, a coordinate not below the field's prime).
 */
export async function p256dhKey(value: string): Promise<string | undefined> {
  const bytes = base64url(value)
  if (bytes?.length !== 65 || bytes[0] !== 0x04) return undefined
  try {
    await crypto.subtle.importKey('raw', bytes, { name: 'ECDH', namedCurve: 'P-256' }, false, [])
  } catch {
    return undefined
  }
  return canonical(bytes)
}

/** `auth` in canonical base64url, or undefined unless it is exactly 16 bytes. */
export function authKey(value: string): string | undefined {
  const bytes = base64url(value)
  return bytes?.length === 16 ? canonical(bytes) : undefined
}
