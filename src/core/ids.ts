import { timingSafeEqual } from 'node:crypto'

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** `length` characters of base62 from a CSPRNG (rejection sampling keeps it unbiased). */
export function randomBase62(length: number): string {
  let out = ''
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62]
    }
  }
  return out
}

/** Opaque record ids with a readable prefix (`msg_…`, `file_…`): 96+ bits of randomness. */
export const newId = (
  prefix:
    | 'msg'
    | 'file'
    | 'ch'
    | 'usr'
    | 'tok'
    | 'ses'
    | 'inv'
    | 'pair'
    | 'join'
    | 'chal'
    | 'sec'
    | 'sil',
) => `${prefix}_${randomBase62(18)}`

export type TokenKind = 'agent' | 'person'

/** Tokens carry a recognisable prefix so leaked ones are easy to spot and scan for. */
const TOKEN_PREFIX: Record<TokenKind, string> = { agent: 'hark_agent_', person: 'hark_person_' }

/** A new secret token: prefix + 43 base62 characters (~256 bits). */
export const newToken = (kind: TokenKind) => TOKEN_PREFIX[kind] + randomBase62(43)

export function tokenKindOf(token: string): TokenKind | undefined {
  if (token.startsWith(TOKEN_PREFIX.agent)) return 'agent'
  if (token.startsWith(TOKEN_PREFIX.person)) return 'person'
  return undefined
}

/** SHA-256 of a presented token. Bun's own hasher: node:crypto's createHash took ~1 µs more per
 * request on the send path (bench/README.md, "The send path at the bare stack's speed"). */
export function hashToken(token: string): Uint8Array {
  const out = new Uint8Array(32)
  Bun.SHA256.hash(token, out)
  return out
}

/**
 * A new bearer secret of `length` base62 characters, handed out once in plaintext, and the hash
 * that is stored in its place (a lookup hashes what is presented: `hashToken`).
 */
export function newSecret(length: number): { secret: string; hash: Uint8Array } {
  const secret = randomBase62(length)
  return { secret, hash: hashToken(secret) }
}

export function sameHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b)
}
