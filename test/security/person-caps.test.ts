import { afterEach, describe, expect, test } from 'bun:test'
import { LIMITS } from '../../src/messages/limits.ts'
import { addChannel } from '../../src/people/service.ts'
import { failsWith, startTestServer, type TestServer } from '../harness.ts'
import { databaseImage } from './util.ts'

/**
 * Finding 10 of the attack pass: nothing capped how many channels a person has (each an agent
 * that stores files and pushes), how much all their channels store together, or how fast a
 * person (a script with a person token) writes.
 */

let s: TestServer
afterEach(() => s?.close())

const FULL = `you have ${LIMITS.channelsPerPerson} connected agents, the most there can be; delete a channel in the app to connect another`

/** Channels up to the cap, made the way `hark admin channel add` makes them. */
async function fillChannels(server: TestServer): Promise<void> {
  const have = (
    await server.ctx.store.channels.byUser(
      ((await server.ctx.store.users.byEmail(server.ownerEmail)) as { id: string }).id,
    )
  ).length
  for (let i = have; i < LIMITS.channelsPerPerson; i++) {
    await addChannel(server.ctx, { email: server.ownerEmail, label: `agent ${i}` })
  }
}

describe(`at most ${LIMITS.channelsPerPerson} channels per person`, () => {
  test('a pairing approved past the cap is 409; nothing is made, the pairing stays pending', async () => {
    s = await startTestServer()
    await fillChannels(s)
    const start = await s
      .raw()
      .call<{ user_code: string; device_code: string }>('POST', '/v1/pair/start')
    const app = await s.sessionClient()
    const before = databaseImage(s.ctx.db)
    const e = await failsWith(app.call('POST', `/v1/app/pairings/${start.user_code}/approve`), 409)
    expect(e.error).toBe(FULL)
    expect(databaseImage(s.ctx.db)).toBe(before)
  })

  test('a join link redeemed past the cap is 409 and stays usable once a channel is gone', async () => {
    s = await startTestServer()
    const app = await s.sessionClient()
    const { join_link } = await app.createJoinLink({ label: 'Late' })
    await fillChannels(s)
    const before = databaseImage(s.ctx.db)
    const e = await failsWith(
      s.raw().call('POST', '/v1/join', { json: { code: join_link.code } }),
      409,
    )
    expect(e.error).toBe(FULL)
    expect(databaseImage(s.ctx.db)).toBe(before)
    await s.person.call('DELETE', `/v1/app/channels/${s.channelId}`)
    const joined = await s.raw().call<{ channel: { label: string } }>('POST', '/v1/join', {
      json: { code: join_link.code },
    })
    expect(joined.channel.label).toBe('Late')
  })

  test('re-keying an existing channel is not a new channel: allowed at the cap', async () => {
    s = await startTestServer()
    await fillChannels(s)
    const { join_link } = await (await s.sessionClient()).createJoinLink({
      channel_id: s.channelId,
    })
    const joined = await s.raw().call<{ channel: { id: string } }>('POST', '/v1/join', {
      json: { code: join_link.code },
    })
    expect(joined.channel.id).toBe(s.channelId)
  })

  test('`hark admin channel add` past the cap fails with the same message', async () => {
    s = await startTestServer()
    await fillChannels(s)
    await expect(addChannel(s.ctx, { email: s.ownerEmail, label: 'one more' })).rejects.toThrow(
      FULL,
    )
    // Another person has their own count.
    await s.addPerson('bob@example.com')
    expect((await addChannel(s.ctx, { email: 'bob@example.com' })).channel.label).toBe('Agent')
  })
})

describe('storage per person, across all their channels', () => {
  /** Files recorded as if uploaded earlier, spread over new channels under each channel's quota. */
  async function recordPersonBytes(total: number): Promise<void> {
    const insert = s.ctx.db.query(
      `INSERT INTO files (id, channel_id, name, mime, size, sha256, created_at)
       VALUES (?1, ?2, 'old.bin', 'application/octet-stream', ?3, '', 0)`,
    )
    let left = total
    for (let i = 0; left > 0; i++) {
      const size = Math.min(left, LIMITS.channelStorageBytes - 1024)
      const { channelId } = await s.addChannel(`store ${i}`)
      insert.run(`file_old${i}`, channelId, size)
      left -= size
    }
  }

  test(`an upload that would take the person past ${LIMITS.personStorageBytes} bytes is 413; one that fits is taken`, async () => {
    s = await startTestServer()
    await recordPersonBytes(LIMITS.personStorageBytes - 100)
    const before = databaseImage(s.ctx.db)
    const e = await failsWith(s.agent.upload('big.bin', new Uint8Array(101)), 413)
    expect(e.error).toContain(
      `your files in all your channels would exceed ${LIMITS.personStorageBytes} bytes`,
    )
    expect(databaseImage(s.ctx.db)).toBe(before)
    expect((await s.agent.upload('fits.bin', new Uint8Array(100))).size).toBe(100)
    await failsWith(s.agent.upload('one.bin', new Uint8Array(1)), 413)
  })

  test('cut while streaming too, when the length is not declared', async () => {
    s = await startTestServer()
    await recordPersonBytes(LIMITS.personStorageBytes - 10)
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new Uint8Array(8))
        c.enqueue(new Uint8Array(8))
        c.close()
      },
    })
    const e = await failsWith(
      s.agent.call('POST', '/v1/files', { query: { name: 'streamed.bin' }, body }),
      413,
    )
    expect(e.error).toContain('your files in all your channels')
  })
})

describe('person writes are limited like an agent channel', () => {
  test('past --write-limit writes a minute, a person token gets 429 with Retry-After; reads go on', async () => {
    s = await startTestServer({ writeLimit: 5 })
    for (let i = 0; i < 5; i++) {
      await s.person.call('POST', `/v1/app/channels/${s.channelId}/read`)
    }
    const e = await failsWith(s.person.call('POST', `/v1/app/channels/${s.channelId}/read`), 429)
    expect(Number(e.headers.get('retry-after'))).toBeGreaterThan(0)
    // The same person from the app is the same person: counted together.
    await failsWith(
      (await s.sessionClient()).call('PATCH', `/v1/app/channels/${s.channelId}`, {
        json: { label: 'x' },
      }),
      429,
    )
    expect((await s.person.channels()).channels).toHaveLength(1)
    // The agent's channel has its own budget; so has another person.
    await s.agent.send({ body: { text: 'still fine' } })
    const bob = await s.addPerson('bob@example.com')
    expect((await bob.call<{ channels: unknown[] }>('GET', '/v1/app/channels')).channels).toEqual(
      [],
    )
    await bob.call('POST', '/v1/app/tokens/tok_nope/rotate').catch((error: { status: number }) => {
      expect(error.status).not.toBe(429)
    })
  })
})
