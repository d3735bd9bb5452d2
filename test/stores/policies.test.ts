import { expect, test } from 'bun:test'
import { pgPolicyStore } from '../../src/messages/asks/policies/pg-store.ts'
import { type NewPolicy, policyStore } from '../../src/messages/asks/policies/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

type E = StoreEngine<ReturnType<typeof policyStore>>

/** Past 2^31 ms: timestamps must come back as the same numbers. */
const T = 1_764_000_000_000

async function people(e: E) {
  await e.insert('users', [
    { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1 },
    { id: 'u2', email: 'u2@example.com', is_owner: 0, created_at: 1 },
  ])
  await e.insert('channels', [
    { id: 'c1', user_id: 'u1', label: 'A', created_at: 1, updated_at: 1 },
    { id: 'c2', user_id: 'u1', label: 'B', created_at: 1, updated_at: 1 },
    { id: 'c3', user_id: 'u2', label: 'C', created_at: 1, updated_at: 1 },
  ])
}

const policy = (id: string, more: Partial<NewPolicy> = {}): NewPolicy => ({
  id,
  user_id: 'u1',
  channel_id: 'c1',
  claim: `{"id":"${id}","rule":"✓"}`,
  proof: '{"signature":"x"}',
  created_at: T,
  expires_at: T + 3600_000,
  ...more,
})

describeStore('policies store', { sqlite: policyStore, postgres: pgPolicyStore }, (engine) => {
  test('insert answers the row unused and unrevoked; byId finds it, the claim byte for byte', async () => {
    const e = engine()
    await people(e)
    const made = await e.write((s) => s.insert(policy('pol_a')))
    const row = {
      ...policy('pol_a'),
      revocation: null,
      revoked_at: null,
      uses: 0,
      last_used_at: null,
    }
    expect(made).toEqual(row)
    expect(await e.read((s) => s.byId('pol_a'))).toEqual(row)
    expect(await e.read((s) => s.byId('pol_none'))).toBeUndefined()
  })

  test("forChannel: the channel's own and the person's all-agents ones, not expired, oldest first", async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      await s.insert(policy('pol_own', { created_at: T + 2 }))
      await s.insert(policy('pol_all', { channel_id: null, created_at: T + 1 }))
      await s.insert(policy('pol_other', { channel_id: 'c2' }))
      await s.insert(policy('pol_old', { expires_at: T + 10 }))
      await s.insert(policy('pol_u2', { user_id: 'u2', channel_id: null }))
    })
    const ids = async (channel: string, now: number) =>
      (await e.read((s) => s.forChannel('u1', channel, now))).map((p) => p.id)
    expect(await ids('c1', T + 100)).toEqual(['pol_all', 'pol_own'])
    expect(await ids('c1', T)).toEqual(['pol_old', 'pol_all', 'pol_own'])
    expect(await ids('c2', T + 100)).toEqual(['pol_other', 'pol_all'])
    expect((await e.read((s) => s.ofUser('u1', T + 100))).map((p) => p.id)).toEqual([
      'pol_own',
      'pol_all',
      'pol_other',
    ])
  })

  test('revoke once (a second is undefined); recordUse counts; eraseExpired counts what it removed', async () => {
    const e = engine()
    await people(e)
    await e.write(async (s) => {
      await s.insert(policy('pol_a'))
      await s.insert(policy('pol_b', { expires_at: T + 5 }))
    })
    const revoked = await e.write((s) => s.revoke('pol_a', '{"claim":"r"}', T + 7))
    expect([revoked?.revocation, revoked?.revoked_at]).toEqual(['{"claim":"r"}', T + 7])
    expect(await e.write((s) => s.revoke('pol_a', '{"claim":"again"}', T + 8))).toBeUndefined()
    expect(await e.write((s) => s.revoke('pol_none', '{}', T))).toBeUndefined()
    await e.write((s) => s.recordUse('pol_a', T + 20))
    const used = await e.write((s) => s.recordUse('pol_a', T + 30))
    expect([used?.uses, used?.last_used_at]).toEqual([2, T + 30])
    expect(await e.write((s) => s.recordUse('pol_none', T))).toBeUndefined()
    expect(await e.write((s) => s.eraseExpired(T + 5))).toBe(1)
    expect(await e.read((s) => s.byId('pol_b'))).toBeUndefined()
  })
})
