import { expect, test } from 'bun:test'
import { pgSecretStore } from '../../src/messages/asks/secrets/pg-store.ts'
import { type NewSecret, secretStore } from '../../src/messages/asks/secrets/store.ts'
import { describeStore, type StoreEngine } from './engines.ts'

type E = StoreEngine<ReturnType<typeof secretStore>>

/** Past 2^31 ms and close to 2^53: timestamps must come back as the same numbers. */
const FAR = 8_640_000_000_000_000

async function channel(e: E) {
  await e.insert('users', { id: 'u1', email: 'u1@example.com', is_owner: 1, created_at: 1 })
  await e.insert('channels', { id: 'c1', user_id: 'u1', label: 'C', created_at: 1, updated_at: 1 })
}

const request = (id: string, more: Partial<NewSecret> = {}): NewSecret => ({
  id,
  channel_id: 'c1',
  message_id: `msg_${id}`,
  name: 'GITHUB_TOKEN',
  description: 'To open the pull request — ✓',
  public_key: 'BPk3'.repeat(22),
  fingerprint: 'ab12-cd34',
  created_at: 1_764_000_000_000,
  ...more,
})

const CIPHERTEXT = 'v1.key.iv.data'

describeStore('secrets store', { sqlite: secretStore, postgres: pgSecretStore }, (engine) => {
  test('insert answers a pending request without ciphertext; byId finds it', async () => {
    const e = engine()
    await channel(e)
    const made = await e.write((s) => s.insert(request('s1', { created_at: FAR })))
    expect(made).toEqual({
      ...request('s1', { created_at: FAR }),
      status: 'pending',
      ciphertext: null,
      proof: null,
      updated_at: FAR,
    })
    expect(await e.read((s) => s.byId('s1'))).toEqual(made)
    expect(await e.read((s) => s.byId('nope'))).toBeUndefined()
    const bare = await e.write((s) => s.insert(request('s2', { description: null })))
    expect(bare.description).toBeNull()
    await expect(e.write((s) => s.insert(request('s1')))).rejects.toThrow()
  })

  test('setStatus moves a request from the status seen: fulfilled holds the ciphertext, delivered drops it', async () => {
    const e = engine()
    await channel(e)
    await e.write((s) => s.insert(request('s1')))
    const fulfilled = await e.write((s) =>
      s.setStatus('s1', 'pending', 'fulfilled', CIPHERTEXT, 10, '{"signature":"x"}'),
    )
    expect(fulfilled).toMatchObject({
      status: 'fulfilled',
      ciphertext: CIPHERTEXT,
      proof: '{"signature":"x"}',
      updated_at: 10,
    })
    expect(await e.read((s) => s.byId('s1'))).toEqual(fulfilled)
    // Not (or no longer) in the status seen: nothing moves.
    expect(
      await e.write((s) => s.setStatus('s1', 'pending', 'cancelled', null, 11)),
    ).toBeUndefined()
    expect(await e.read((s) => s.byId('s1'))).toEqual(fulfilled)
    const delivered = await e.write((s) => s.setStatus('s1', 'fulfilled', 'delivered', null, FAR))
    expect(delivered).toMatchObject({
      status: 'delivered',
      ciphertext: null,
      proof: null,
      updated_at: FAR,
    })
    expect(
      await e.write((s) => s.setStatus('nope', 'pending', 'cancelled', null, 12)),
    ).toBeUndefined()
  })

  test('the ciphertext exists exactly while fulfilled (the table refuses anything else)', async () => {
    const e = engine()
    await channel(e)
    await e.write((s) => s.insert(request('s1')))
    await expect(
      e.write((s) => s.setStatus('s1', 'pending', 'fulfilled', null, 5)),
    ).rejects.toThrow()
    await expect(
      e.write((s) => s.setStatus('s1', 'pending', 'cancelled', CIPHERTEXT, 5)),
    ).rejects.toThrow()
    expect(await e.read((s) => s.byId('s1'))).toMatchObject({ status: 'pending', ciphertext: null })
  })

  test('requests go with their channel', async () => {
    const e = engine()
    await channel(e)
    await e.write((s) => s.insert(request('s1')))
    await e.rows('DELETE FROM channels WHERE id = ?', 'c1')
    expect(await e.read((s) => s.byId('s1'))).toBeUndefined()
  })

  test('two deliveries racing: the ciphertext is handed out once', async () => {
    const e = engine()
    await channel(e)
    await e.write(async (s) => {
      await s.insert(request('s1'))
      await s.setStatus('s1', 'pending', 'fulfilled', CIPHERTEXT, 5)
    })
    const delivered = await Promise.all(
      [1, 2, 3, 4].map((n) =>
        e.write(async (s) => {
          const seen = await s.byId('s1')
          if (seen?.status !== 'fulfilled') return undefined
          const moved = await s.setStatus('s1', 'fulfilled', 'delivered', null, 5 + n)
          await Bun.sleep(20) // the first holds its row while the others try
          return moved ? seen.ciphertext : undefined
        }),
      ),
    )
    expect(delivered.filter((c) => c !== undefined)).toEqual([CIPHERTEXT])
    expect(await e.read((s) => s.byId('s1'))).toMatchObject({
      status: 'delivered',
      ciphertext: null,
    })
  })
})
