import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { authenticateAgent } from '../../src/access/tokens/service.ts'
import { startTestServer, TestClock, type TestServer } from '../harness.ts'

let s: TestServer
afterEach(() => s?.close())

/**
 * The agent guard remembers the tokens it found good (src/access/tokens/auth-cache.ts, issue 32).
 * Each test first has a token accepted twice (so it is remembered), then changes what it
 * authorizes the way the product does, and checks the very next request sees the change.
 */
const channelStatus = async (token: string) =>
  (await s.request('GET', '/v1/channel', { token })).status

async function remembered(): Promise<{ token: string; channelId: string; tokenId: string }> {
  const made = await s.addChannel('Remembered')
  expect(await channelStatus(made.token)).toBe(200)
  expect(await channelStatus(made.token)).toBe(200)
  const row = s.ctx.db
    .query<{ id: string }, [string]>('SELECT id FROM tokens WHERE channel_id = ?1')
    .get(made.channelId)
  return { token: made.token, channelId: made.channelId, tokenId: row?.id as string }
}

describe('agent routes: a remembered token', () => {
  test('GET /v1/channel → answered from memory: the token and its channel are not read again', async () => {
    s = await startTestServer()
    const { token, channelId } = await remembered()
    // Changed on the server's own connection, past its stores: nothing tells the cache (in the
    // product every write goes through the stores, which empty it). The agent still sees the
    // label it was remembered with, so the guard did not read the database: its lookup (a read
    // of the tokens store) must not empty the cache it fills.
    await s.ctx.writes.flush()
    s.ctx.db
      .query('UPDATE channels SET label = ?1 WHERE id = ?2')
      .run('Changed past the stores', channelId)
    const seen = await s.request('GET', '/v1/channel', { token })
    expect(seen.status).toBe(200)
    expect(seen.body.channel.label).toBe('Remembered')
  })

  test('DELETE /v1/app/tokens/:id → the agent token is refused on its next request', async () => {
    s = await startTestServer()
    const { token, tokenId } = await remembered()
    const revoked = await s.request('DELETE', `/v1/app/tokens/${tokenId}`, {
      token: s.personToken,
    })
    expect(revoked.status).toBe(200)
    expect(await channelStatus(token)).toBe(401)
    expect(
      (await s.request('POST', '/v1/messages', { token, json: { body: { text: 'x' } } })).status,
    ).toBe(401)
  })

  test('DELETE /v1/app/channels/:id → its token is refused on its next request', async () => {
    s = await startTestServer()
    const { token, channelId } = await remembered()
    const deleted = await s.request('DELETE', `/v1/app/channels/${channelId}`, {
      token: s.personToken,
    })
    expect(deleted.status).toBe(200)
    expect(await channelStatus(token)).toBe(401)
  })

  test('revoked by another process (hark admin, sqlite3) → refused on its next request', async () => {
    s = await startTestServer()
    const { token, tokenId } = await remembered()
    // The server's open batch commits first: it shares this test's thread, so waiting for its
    // lock below would wait for ever.
    await s.ctx.writes.flush()
    const other = new Database(join(s.dir, 'hark.db'))
    try {
      other.run('PRAGMA busy_timeout = 5000')
      other.query('UPDATE tokens SET revoked_at = ?1 WHERE id = ?2').run(Date.now(), tokenId)
    } finally {
      other.close()
    }
    expect(await channelStatus(token)).toBe(401)
  })

  test('PATCH /v1/app/channels/:id → the agent sees the new label at once', async () => {
    s = await startTestServer()
    const { token, channelId } = await remembered()
    const renamed = await s.request('PATCH', `/v1/app/channels/${channelId}`, {
      token: s.personToken,
      json: { label: 'Renamed' },
    })
    expect(renamed.status).toBe(200)
    const seen = await s.request('GET', '/v1/channel', { token })
    expect(seen.body.channel.label).toBe('Renamed')
  })

  test('a change read before its unit rolled back is not remembered', async () => {
    s = await startTestServer()
    const { token, channelId } = await remembered()
    let release = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    let renamed = () => {}
    const written = new Promise<void>((resolve) => {
      renamed = resolve
    })
    const failing = s.ctx.writes.apply(async (tx) => {
      await tx.store.channels.rename(channelId, 'Never committed', s.ctx.clock.now())
      renamed()
      await gate
      throw new Error('rolled back on purpose')
    })
    await written
    // Inside the open transaction the server's one connection reads the rename (as it always
    // has; no answer leaves before the write is durable): the guard must not keep it.
    const during = await authenticateAgent(s.ctx, `Bearer ${token}`).finally(release)
    expect(during.channel.label).toBe('Never committed')
    await expect(failing).rejects.toThrow('rolled back on purpose')
    const after = await authenticateAgent(s.ctx, `Bearer ${token}`)
    expect(after.channel.label).toBe('Remembered')
  })

  test("its use is still recorded once a minute (the token's last_used_at)", async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const { token, tokenId } = await remembered()
    const lastUsed = () =>
      s.ctx.db
        .query<{ t: number }, [string]>('SELECT last_used_at AS t FROM tokens WHERE id = ?1')
        .get(tokenId)?.t
    const first = lastUsed()
    expect(first).toBe(clock.ms)
    clock.advance(61_000)
    expect(await channelStatus(token)).toBe(200)
    expect(lastUsed()).toBe(clock.ms)
  })
})
