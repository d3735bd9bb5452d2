import { describe, expect, test } from 'bun:test'
import { KeySet } from '../../src/access/keys/keyring.ts'
import {
  codeHash,
  codeMatches,
  dataContext,
  newCode,
  normalizeCode,
} from '../../src/people/enrol/email/codes.ts'

const key = () => crypto.getRandomValues(new Uint8Array(32))
const keys = new KeySet(
  20_000,
  new Map([
    ['email-code', key()],
    ['email-data', key()],
  ]),
)
const k = keys.key('email-code')

describe('codes', () => {
  test('8 digits, every digit used in every position', () => {
    const codes = Array.from({ length: 2000 }, newCode)
    for (const code of codes) expect(code).toMatch(/^\d{8}$/)
    for (let position = 0; position < 8; position++) {
      expect(new Set(codes.map((c) => c[position])).size).toBe(10)
    }
    expect(new Set(codes).size).toBeGreaterThan(1990)
  })

  test('typed codes: spaces and dashes dropped, anything else refused', () => {
    expect(normalizeCode(' 0123 4567 ')).toBe('01234567')
    expect(normalizeCode('0123-4567')).toBe('01234567')
    for (const bad of ['', '1234567', '123456789', '1234567a', '１２３４５６７８']) {
      expect(normalizeCode(bad)).toBeUndefined()
    }
  })

  test('the hash binds the code to its address (any case), purpose and key', () => {
    const hash = codeHash(k, 'Ada@Example.com', 'login', '01234567')
    expect(codeMatches(k, hash, 'ada@example.com', 'login', '01234567')).toBe(true)
    expect(codeMatches(k, hash, 'ada@example.com', 'login', '01234568')).toBe(false)
    expect(codeMatches(k, hash, 'ada@example.com', 'signup', '01234567')).toBe(false)
    expect(codeMatches(k, hash, 'bob@example.com', 'login', '01234567')).toBe(false)
    expect(codeMatches(key(), hash, 'ada@example.com', 'login', '01234567')).toBe(false)
  })

  test('sealed data opens only for its address and purpose, and not when tampered with', () => {
    const open = (email: string, purpose: 'login' | 'signup', sealed: string) =>
      keys.open('email-data', dataContext(email, purpose), sealed)
    const sealed = keys.seal('email-data', dataContext('ada@example.com', 'signup'), {
      invite: 'secret',
    })
    expect(sealed).not.toContain('secret')
    expect(open('ADA@example.com', 'signup', sealed)).toEqual({ invite: 'secret' })
    expect(open('bob@example.com', 'signup', sealed)).toBeUndefined()
    expect(open('ada@example.com', 'login', sealed)).toBeUndefined()
    const [period, iv, tag, body] = sealed.split('.') as [string, string, string, string]
    // The first character: the last one of a base64url text may carry only padding bits.
    const flipped = `${period}.${iv}.${tag}.${body.startsWith('A') ? 'B' : 'A'}${body.slice(1)}`
    expect(open('ada@example.com', 'signup', flipped)).toBeUndefined()
    expect(open('ada@example.com', 'signup', 'garbage')).toBeUndefined()
  })
})
