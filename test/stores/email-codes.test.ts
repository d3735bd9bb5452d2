import { expect, test } from 'bun:test'
import { pgEmailCodeStore } from '../../src/people/enrol/email/pg-store.ts'
import { emailCodeStore } from '../../src/people/enrol/email/store.ts'
import { describeStore } from './engines.ts'

const bytes = (n: number) => new Uint8Array(32).fill(n)
const code = (
  id: string,
  n: number,
  more: { email?: string; purpose?: string; at?: number } = {},
) => ({
  id,
  email: more.email ?? 'Someone@Example.com',
  purpose: more.purpose ?? 'login',
  code_hash: bytes(n),
  data: `3.sealed-${id}`,
  asked_from: bytes(100 + n),
  created_at: more.at ?? 1_764_000_000_000 + n,
  expires_at: (more.at ?? 1_764_000_000_000 + n) + 600_000,
})

describeStore(
  'email codes store',
  { sqlite: emailCodeStore, postgres: pgEmailCodeStore },
  (engine) => {
    test('codes of an address and purpose, oldest first, whatever the case of the address', async () => {
      const e = engine()
      await e.write(async (s) => {
        await s.insert(code('b', 2, { at: 20 }))
        await s.insert(code('a', 1, { at: 20 }))
        await s.insert(code('z', 3, { at: 10 }))
        await s.insert(code('other', 4, { purpose: 'signup' }))
        await s.insert(code('else', 5, { email: 'else@example.com' }))
      })
      const found = await e.read((s) => s.byAddress('someone@EXAMPLE.com', 'login'))
      expect(found.map((c) => c.id)).toEqual(['z', 'a', 'b'])
      expect(found[0]).toEqual({ ...code('z', 3, { at: 10 }), tries: 0, other_tries: 0 })
      expect(await e.read((s) => s.byAddress('nobody@example.com', 'login'))).toEqual([])
    })

    test('wrong tries counted per kind, also when racing', async () => {
      const e = engine()
      await e.write((s) => s.insert(code('c', 1)))
      await Promise.all([
        ...Array.from({ length: 5 }, () => e.write((s) => s.addTry('c'))),
        ...Array.from({ length: 3 }, () => e.write((s) => s.addOtherTry('c'))),
      ])
      const [c] = await e.read((s) => s.byAddress('someone@example.com', 'login'))
      expect(c).toMatchObject({ tries: 5, other_tries: 3 })
    })

    test('remove one, removeAll of an address and purpose, removeExpired at the boundary', async () => {
      const e = engine()
      await e.write(async (s) => {
        await s.insert(code('a', 1, { at: 100 }))
        await s.insert(code('b', 2, { at: 200 }))
        await s.insert(code('x', 3, { purpose: 'signup', at: 300 }))
      })
      expect(await e.write((s) => s.remove('a'))).toBe(true)
      expect(await e.write((s) => s.remove('a'))).toBe(false)
      expect(await e.write((s) => s.removeAll('SOMEONE@example.com', 'login'))).toBe(true)
      expect(await e.write((s) => s.removeAll('someone@example.com', 'login'))).toBe(false)
      expect(await e.write((s) => s.removeExpired(300 + 600_000 - 1))).toBe(0)
      expect(await e.write((s) => s.removeExpired(300 + 600_000))).toBe(1)
    })
  },
)
