import { expect, test } from 'bun:test'
import { pgServerKeyStore } from '../../src/access/keys/pg-store.ts'
import { serverKeyStore } from '../../src/access/keys/store.ts'
import { describeStore } from './engines.ts'

const key = (n: number) => new Uint8Array(32).fill(n)

describeStore(
  'server keys store',
  { sqlite: serverKeyStore, postgres: pgServerKeyStore },
  (engine) => {
    test('the first key of a purpose and period stays; racing adds all read back the same one', async () => {
      const e = engine()
      await Promise.all([1, 2, 3, 4].map((n) => e.write((s) => s.add('seal', 20_418, key(n), n))))
      const kept = (await e.read((s) => s.ofPeriod(20_418))).get('seal')
      expect(kept).toBeInstanceOf(Uint8Array)
      expect([1, 2, 3, 4].map((n) => key(n).join())).toContain(String(kept?.join()))
      await e.write((s) => s.add('seal', 20_418, key(9), 9))
      expect((await e.read((s) => s.ofPeriod(20_418))).get('seal')).toEqual(kept)
      expect(await e.read((s) => s.all())).toHaveLength(1)
    })

    test('ofPeriod maps purposes to keys; oldest; eraseBefore removes earlier periods and counts', async () => {
      const e = engine()
      expect(await e.read((s) => s.oldest())).toBeUndefined()
      await e.write(async (s) => {
        await s.add('seal', 10, key(1), 1_764_000_000_000)
        await s.add('codes', 10, key(2), 1_764_000_000_000)
        await s.add('seal', 11, key(3), 1_764_000_000_001)
        await s.add('seal', 12, key(4), 1_764_000_000_002)
      })
      expect(await e.read((s) => s.ofPeriod(10))).toEqual(
        new Map([
          ['seal', key(1)],
          ['codes', key(2)],
        ]),
      )
      expect(await e.read((s) => s.ofPeriod(99))).toEqual(new Map())
      expect(await e.read((s) => s.oldest())).toBe(10)
      expect(await e.write((s) => s.eraseBefore(12))).toBe(3)
      expect(await e.read((s) => s.oldest())).toBe(12)
      expect(await e.read((s) => s.all())).toEqual([
        { purpose: 'seal', period: 12, key: key(4), created_at: 1_764_000_000_002 },
      ])
    })
  },
)
