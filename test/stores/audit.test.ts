import { expect, test } from 'bun:test'
import { pgAuditStore } from '../../src/messages/asks/audit/pg-store.ts'
import { chainHash } from '../../src/messages/asks/audit/service.ts'
import { type AuditRow, auditStore, GENESIS_HASH } from '../../src/messages/asks/audit/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

type E = StoreEngine<ReturnType<typeof auditStore>>
type Store = Parameters<Parameters<E['write']>[0]>[0]

/** A realistic ms timestamp (2025), far past 2^31. */
const T = 1_764_000_000_000

/** What the service does: read the last hash, append the entry chained to it. */
async function append(s: Store, channel: string, n: number): Promise<AuditRow> {
  const entry = JSON.stringify({ n, status: 'answered', answer: { decision: 'allow' } })
  const prev = await s.lastHash()
  return await s.insert({
    at: T + n,
    user_id: 'u1',
    channel_id: channel,
    message_id: `m${n}`,
    entry,
    prev_hash: prev,
    hash: chainHash(prev, entry),
  })
}

/** Every row in order, checked to be one unbroken chain from the genesis hash. */
async function checkedChain(e: E): Promise<AuditRow[]> {
  const rows = await e.read((s) => s.page(0, 1000))
  let prev = GENESIS_HASH
  for (const r of rows) {
    expect(r.prev_hash).toBe(prev)
    expect(r.hash).toBe(chainHash(prev, r.entry))
    prev = r.hash
  }
  return rows
}

describeStore('audit store', { sqlite: auditStore, postgres: pgAuditStore }, (engine) => {
  test('lastHash is the genesis hash until the first row; insert answers the row with its seq', async () => {
    const e = engine()
    expect(await e.read((s) => s.lastHash())).toBe(GENESIS_HASH)
    const first = await e.write((s) => append(s, 'c1', 1))
    const entry = JSON.stringify({ n: 1, status: 'answered', answer: { decision: 'allow' } })
    expect(first).toEqual({
      seq: 1,
      at: T + 1,
      user_id: 'u1',
      channel_id: 'c1',
      message_id: 'm1',
      entry,
      prev_hash: GENESIS_HASH,
      hash: chainHash(GENESIS_HASH, entry),
    })
    expect(await e.read((s) => s.lastHash())).toBe(first.hash)
    const second = await e.write((s) => append(s, 'c1', 2))
    expect(second.seq).toBe(2)
    expect(second.prev_hash).toBe(first.hash)
    // The last row by seq, whatever the hashes' own order.
    expect(await e.read((s) => s.lastHash())).toBe(second.hash)
    expect(await checkedChain(e)).toEqual([first, second])
  })

  test('byChannel: one channel, newest first, before a seq, at most limit', async () => {
    const e = engine()
    await e.write(async (s) => {
      for (let n = 1; n <= 6; n++) await append(s, n % 2 ? 'c1' : 'c2', n)
    })
    const seqs = async (channel: string, before: number, limit: number) =>
      (await e.read((s) => s.byChannel(channel, before, limit))).map((r) => r.seq)
    expect(await seqs('c1', Number.MAX_SAFE_INTEGER, 10)).toEqual([5, 3, 1])
    expect(await seqs('c1', Number.MAX_SAFE_INTEGER, 2)).toEqual([5, 3])
    expect(await seqs('c1', 3, 10)).toEqual([1]) // strictly before
    expect(await seqs('c2', 6, 10)).toEqual([4, 2])
    expect(await seqs('c1', 1, 10)).toEqual([])
    expect(await seqs('nope', Number.MAX_SAFE_INTEGER, 10)).toEqual([])
    const [row] = await e.read((s) => s.byChannel('c2', 3, 1))
    expect(row).toMatchObject({ seq: 2, at: T + 2, channel_id: 'c2', message_id: 'm2' })
  })

  test('page: every row after a seq, in order, at most limit', async () => {
    const e = engine()
    expect(await e.read((s) => s.page(0, 10))).toEqual([])
    await e.write(async (s) => {
      for (let n = 1; n <= 5; n++) await append(s, 'c1', n)
    })
    const seqs = async (after: number, limit: number) =>
      (await e.read((s) => s.page(after, limit))).map((r) => r.seq)
    expect(await seqs(0, 2)).toEqual([1, 2])
    expect(await seqs(2, 2)).toEqual([3, 4])
    expect(await seqs(4, 2)).toEqual([5])
    expect(await seqs(5, 2)).toEqual([])
    expect(await seqs(Number.MAX_SAFE_INTEGER, 2)).toEqual([])
  })

  test('appends racing: one unbroken chain, in seq order, every entry once', async () => {
    const e = engine()
    await e.write((s) => append(s, 'c1', 0))
    const appended = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((n) =>
        e.write(async (s) => {
          const prev = await s.lastHash()
          await Bun.sleep(20) // on Postgres all would have read the last hash before any inserts
          const entry = JSON.stringify({ n })
          return await s.insert({
            at: T + n,
            user_id: 'u1',
            channel_id: 'c1',
            message_id: `m${n}`,
            entry,
            prev_hash: prev,
            hash: chainHash(prev, entry),
          })
        }),
      ),
    )
    const chain = await checkedChain(e)
    expect(chain).toHaveLength(7)
    expect(chain.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(new Set(chain.map((r) => r.prev_hash)).size).toBe(7) // no row has two successors
    expect(appended.map((r) => r.message_id).toSorted()).toEqual(
      chain
        .slice(1)
        .map((r) => r.message_id)
        .toSorted(),
    )
  })
})
