import { createHash } from 'node:crypto'

/**
 * A short, stable fingerprint of a passkey's public key, for people to compare: 8 groups of 4
 * hex. The agent prints it for the keys it pinned (`hark init`, `hark keys`) and the server
 * gives it with each passkey the app lists, both from this one function, so the two read the
 * same by construction. Only the key's own fields count (not its id, name or algorithm).
 * node:crypto's hash is synchronous, so the app does not import this: it shows the server's.
 */
export function fingerprint(key: { jwk: JsonWebKey }): string {
  const { kty, crv, x, y, n, e } = key.jwk
  const hex = createHash('sha256')
    .update(JSON.stringify({ kty, crv, x, y, n, e }))
    .digest('hex')
    .slice(0, 32)
  return hex.match(/.{4}/g)?.join(' ') ?? hex
}
