import { describe, expect, test } from 'bun:test'
import {
  codeHash,
  codeMatches,
  newCode,
  normalizeCode,
  openData,
  sealData,
} from '../../src/access/email/codes.ts'

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

  test('the hash binds the code to its address (any case) and purpose', () => {
    const hash = codeHash('Ada@Example.com', 'login', '01234567')
    expect(codeMatches(hash, 'ada@example.com', 'login', '01234567')).toBe(true)
    expect(codeMatches(hash, 'ada@example.com', 'login', '01234568')).toBe(false)
    expect(codeMatches(hash, 'ada@example.com', 'signup', '01234567')).toBe(false)
    expect(codeMatches(hash, 'bob@example.com', 'login', '01234567')).toBe(false)
  })

  test('sealed data opens only for its address and purpose, and not when tampered with', () => {
    const sealed = sealData('ada@example.com', 'signup', { invite: 'secret' })
    expect(sealed).not.toContain('secret')
    expect(openData('ADA@example.com', 'signup', sealed)).toEqual({ invite: 'secret' })
    expect(openData('bob@example.com', 'signup', sealed)).toBeUndefined()
    expect(openData('ada@example.com', 'login', sealed)).toBeUndefined()
    const [iv, tag, body] = sealed.split('.') as [string, string, string]
    const flipped = `${iv}.${tag}.${body.slice(0, -2)}${body.endsWith('AA') ? 'AB' : 'AA'}`
    expect(openData('ada@example.com', 'signup', flipped)).toBeUndefined()
    expect(openData('ada@example.com', 'signup', 'garbage')).toBeUndefined()
  })
})
