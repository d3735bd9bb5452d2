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

/**
 * Opaque record ids with a readable prefix (`file_…`, `ch_…`): 96+ bits of randomness. A
 * message's id is `newMessageId`'s.
 */
export const newId = (
  prefix: 'file' | 'ch' | 'usr' | 'tok' | 'ses' | 'inv' | 'pair' | 'join' | 'chal' | 'sec' | 'sil',
) => `${prefix}_${randomBase62(18)}`

/**
 * A message's id: `msg_`, the time it is made (8 base62 characters, fixed width, so ids made
 * later sort after), then 14 random characters (83 bits). Still opaque to clients (the API
 * promises nothing of an id's form); it only lets the database append: `messages.id` is a
 * unique index, and random ids put each send's entry on its own page of it, so a batch of 32
 * sends rewrote ~32 index pages at COMMIT (the write-ahead log's frames) and more as the table
 * grows; ids that follow the clock land on the index's last page (bench/README.md, "The send
 * path, fourth pass"). The time it tells is the message's `created_at`, which whoever may read
 * the id may read too.
 */
export const newMessageId = (now: number): string => `msg_${base62Time(now)}${randomBase62(14)}`

/** Milliseconds since the epoch as 8 base62 characters, most significant first (to year 8888). */
function base62Time(ms: number): string {
  let out = ''
  let rest = Math.max(0, Math.floor(ms))
  for (let i = 0; i < 8; i++) {
    out = ALPHABET[rest % 62] + out
    rest = Math.floor(rest / 62)
  }
  return out
}

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
