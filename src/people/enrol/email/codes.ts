import { createHmac } from 'node:crypto'
import { fail } from '../../../core/errors.ts'
import { sameHash } from '../../../core/ids.ts'

/** What an emailed code proves: that the person reads this address, to log in or to sign up. */
export const PURPOSES = ['login', 'signup'] as const
export type Purpose = (typeof PURPOSES)[number]

/** A clearer 400 than the schema's "expected union value". */
export function parsePurpose(raw: string): Purpose {
  if ((PURPOSES as readonly string[]).includes(raw)) return raw as Purpose
  throw fail.invalid('purpose', `must be one of ${PURPOSES.join(', ')}`)
}

export const CODE_DIGITS = 8
export const CODE_TTL_MS = 10 * 60 * 1000
/**
 * Wrong tries a code survives from the client address that asked for it; after that, that address
 * cannot use it, even with the right code. Every other address together has its own
 * `MAX_OTHER_TRIES` (the person may type the code on another network than they asked from), so a
 * stranger's wrong guesses never use up the tries of the person who asked.
 *
 * Why guessing stays hopeless: a code is one of 10^8, so each wrong comparison hits with a chance
 * of 10^-8. A code meets at most MAX_TRIES + MAX_OTHER_TRIES = 10 wrong tries in its life, whoever
 * sends them and from however many addresses. An address gets at most 20 codes an hour from all
 * sources together (`EMAIL_LIMITS.codesPerAddress`; 40 in the first hour, a full bucket), so at
 * most 200 wrong comparisons an hour against one address: a chance of 2 × 10^-6 an hour,
 * 5 × 10^-5 a day, while the person gets 20 mails an hour they did not ask for. Each client
 * address is also held to `EMAIL_LIMITS.verifiesPerIp` tries per 15 minutes, across addresses.
 */
export const MAX_TRIES = 5
export const MAX_OTHER_TRIES = 5

const RANGE = 10 ** CODE_DIGITS
/** The largest multiple of RANGE below 2^32: values above it would favour low codes. */
const UNBIASED_LIMIT = Math.floor(2 ** 32 / RANGE) * RANGE

/** A fresh code: 8 decimal digits from a CSPRNG, by rejection sampling (no modulo bias). */
export function newCode(): string {
  const word = new Uint32Array(1)
  for (;;) {
    crypto.getRandomValues(word)
    const n = word[0] as number
    if (n < UNBIASED_LIMIT) return String(n % RANGE).padStart(CODE_DIGITS, '0')
  }
}

/** People type codes with spaces or dashes ("1234 5678"); those are dropped, nothing else. */
export function normalizeCode(raw: string): string | undefined {
  const code = raw.replace(/[\s-]/g, '')
  return code.length === CODE_DIGITS && /^\d+$/.test(code) ? code : undefined
}

/**
 * Binds the code to its address and purpose: a login code cannot finish a sign-up. Keyed, since
 * an 8-digit code has 10^8 values and a plain SHA-256 in a leaked database or backup would give
 * it up in seconds. `key` is the `email-code` key of the period the code was issued in
 * (access/keys/keyring.ts): in the database, so any instance checks a code another issued;
 * left out of backups. Which period a row's keys are of is named by its sealed `data`.
 */
export function codeHash(key: Uint8Array, email: string, purpose: Purpose, code: string) {
  const input = `${purpose}\n${email.toLowerCase()}\n${code}`
  return new Uint8Array(createHmac('sha256', key).update(input).digest())
}

/**
 * Who asked for a code, as stored with it: a keyed hash of the client address (the limit key,
 * IPv6 cut to /64), so the database holds no address and the tag means nothing once its key is
 * erased.
 */
export const askerTag = (key: Uint8Array, clientAddress: string): Uint8Array =>
  new Uint8Array(createHmac('sha256', key).update(`asked-from\n${clientAddress}`).digest())

/** Constant-time: the comparison takes as long for a near miss as for a far one. */
export const codeMatches = (
  key: Uint8Array,
  stored: Uint8Array,
  email: string,
  purpose: Purpose,
  code: string,
) => sameHash(stored, codeHash(key, email, purpose, code))

/** What a code's sealed data is bound to: it opens only for its address and purpose. */
export const dataContext = (email: string, purpose: Purpose) => `${purpose}\n${email.toLowerCase()}`
