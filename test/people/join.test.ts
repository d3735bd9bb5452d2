import { afterEach, describe, expect, test } from 'bun:test'
import { issueToken } from '../../src/access/tokens/service.ts'
import type { PersonClient } from '../../src/agent/client.ts'
import type { ChannelRow } from '../../src/channels/store.ts'
import { LIMITS } from '../../src/messages/limits.ts'
import type { UserRow } from '../../src/people/store.ts'
import { BASE, failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count, fieldOf } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

const MINUTE = 60_000

interface JoinLink {
  id: string
  link: string
  code: string
  channel_id: string | null
  expires_at: number
}
interface Joined {
  token: string
  channel: { id: string; label: string }
}

/** Made from the app: a browser session (a person token may not mint agent tokens). */
const makeLink = async (json?: unknown, person?: PersonClient): Promise<{ join_link: JoinLink }> =>
  (person ?? (await s.sessionClient())).call<{ join_link: JoinLink }>(
    'POST',
    '/v1/app/join-links',
    { json },
  )
/** `hark join`: public, no token. */
const redeem = (code: unknown) => s.raw().call<Joined>('POST', '/v1/join', { json: { code } })

describe('POST /v1/app/join-links', () => {
  test('makes a single-use link that lives 15 minutes, the code in the fragment', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const { join_link } = await makeLink({ label: 'CI runner' })
    expect(join_link.id).toStartWith('join_')
    expect(join_link.code).toMatch(/^[0-9A-Za-z]{32}$/)
    expect(join_link.link).toBe(`${BASE}/join#${join_link.code}`)
    expect(join_link.channel_id).toBeNull()
    expect(join_link.expires_at).toBe(clock.ms + 15 * MINUTE)
  })

  test('stores only a hash of the code', async () => {
    s = await startTestServer()
    const { join_link } = await makeLink()
    const rows = s.ctx.db.query('SELECT * FROM join_links').all()
    expect(JSON.stringify(rows)).not.toContain(join_link.code)
  })

  test('an invalid label is 400 naming label; nothing is stored', async () => {
    s = await startTestServer()
    for (const label of ['', '  ', 'x'.repeat(LIMITS.labelChars + 1), 5, null]) {
      const res = await (await s.sessionClient()).raw('POST', '/v1/app/join-links', {
        json: { label },
      })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('label')
    }
    expect(count(s.ctx, 'join_links')).toBe(0)
  })

  test('a channel_id that is not a string is 400 naming channel_id', async () => {
    s = await startTestServer()
    for (const channel_id of [5, null, ['x'], {}]) {
      const res = await (await s.sessionClient()).raw('POST', '/v1/app/join-links', {
        json: { channel_id },
      })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('channel_id')
    }
    expect(count(s.ctx, 'join_links')).toBe(0)
  })

  test("another person's channel, or an unknown one, is 404; nothing is stored", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    await failsWith(makeLink({ channel_id: bobs.channelId }), 404)
    await failsWith(makeLink({ channel_id: 'ch_nope' }), 404)
    expect(count(s.ctx, 'join_links')).toBe(0)
    // Bob's agent is untouched.
    expect((await bobs.agent.channel()).channel.label).toBe('Bob agent')
  })

  test('a person token cannot make one, for a new channel or to re-key: 403, the agent keeps its channel', async () => {
    s = await startTestServer()
    for (const json of [{}, { label: 'Mine now' }, { channel_id: s.channelId }]) {
      const e = await failsWith(makeLink(json, s.person), 403)
      expect(e.error).toBe(
        'making a join link needs a browser session: log in to the app; a person token cannot do this',
      )
    }
    expect(count(s.ctx, 'join_links')).toBe(0)
    expect((await s.agent.channel()).channel.id).toBe(s.channelId)
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('POST', '/v1/app/join-links'), 401)
    await failsWith(s.agent.call('POST', '/v1/app/join-links'), 403)
    expect(count(s.ctx, 'join_links')).toBe(0)
  })

  test('from the web app it needs the app origin', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    for (const origin of [null, 'null', 'https://evil.example']) {
      const res = await s.request('POST', '/v1/app/join-links', { cookie, origin, json: {} })
      expect(res.status).toBe(403)
    }
    expect(count(s.ctx, 'join_links')).toBe(0)
    const ok = await s.request('POST', '/v1/app/join-links', { cookie, json: { label: 'App' } })
    expect(ok.status).toBe(200)
    expect((await redeem(ok.body.join_link.code)).channel.label).toBe('App')
  })
})

describe('POST /v1/join: a new channel', () => {
  test('gives a working agent token for a new channel of the person, named by the link', async () => {
    s = await startTestServer()
    const { join_link } = await makeLink({ label: 'CI runner' })
    const joined = await redeem(join_link.code)
    expect(joined.token).toMatch(/^hark_agent_[0-9A-Za-z]{43}$/)
    expect(joined.channel.label).toBe('CI runner')
    expect(joined.channel.id).not.toBe(s.channelId)
    const agent = s.agentClient(joined.token)
    expect((await agent.channel()).channel).toMatchObject(joined.channel)
    await agent.send({ body: { text: 'hello from CI' } })
    const { channels } = await s.person.channels()
    const mine = channels.find((c) => c.id === joined.channel.id)
    expect(mine?.last_message?.body.text).toBe('hello from CI')
  })

  test("without a label the channel is 'Agent'", async () => {
    s = await startTestServer()
    const { join_link } = await makeLink()
    expect((await redeem(join_link.code)).channel.label).toBe('Agent')
  })

  test("a link made by another person makes that person's channel", async () => {
    s = await startTestServer()
    const bob = await s.addPerson('bob@example.com')
    const { join_link } = await makeLink(
      { label: 'Bob CI' },
      await s.sessionClient('bob@example.com'),
    )
    const joined = await redeem(join_link.code)
    expect((await bob.channels()).channels.map((c) => c.id)).toEqual([joined.channel.id])
    expect((await s.person.channels()).channels.map((c) => c.id)).toEqual([s.channelId])
  })

  test('is single use: the second redeem is 403 and makes nothing', async () => {
    s = await startTestServer()
    const { join_link } = await makeLink()
    await redeem(join_link.code)
    const err = await failsWith(redeem(join_link.code), 403)
    expect(err.error).toContain('join link')
    expect((await s.person.channels()).channels).toHaveLength(2)
  })

  test('expires after 15 minutes (403)', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const early = await makeLink({ label: 'early' })
    const late = await makeLink({ label: 'late' })
    clock.advance(15 * MINUTE - 1)
    expect((await redeem(early.join_link.code)).channel.label).toBe('early')
    clock.advance(1)
    await failsWith(redeem(late.join_link.code), 403)
    expect((await s.person.channels()).channels.map((c) => c.label)).toEqual([
      'Test agent',
      'early',
    ])
  })

  test('an unknown code is 403; a missing, empty or non-string one is 400 naming code', async () => {
    s = await startTestServer()
    await failsWith(redeem('nope'), 403)
    for (const json of [{}, { code: '' }, { code: 5 }, { code: null }]) {
      const res = await s.raw().raw('POST', '/v1/join', { json })
      expect(res.status).toBe(400)
      expect(await fieldOf(res)).toBe('code')
    }
    const malformed = await s.raw().raw('POST', '/v1/join', {
      body: '{nope',
      headers: { 'content-type': 'application/json' },
    })
    expect(malformed.status).toBe(400)
  })

  test('a link whose maker was removed is 403', async () => {
    s = await startTestServer()
    await s.addPerson('bob@example.com')
    const { join_link } = await makeLink({}, await s.sessionClient('bob@example.com'))
    const bobId = (await s.ctx.store.users.byEmail('bob@example.com'))?.id as string
    await (await s.sessionClient()).call('DELETE', `/v1/app/people/${bobId}`)
    await failsWith(redeem(join_link.code), 403)
  })

  test('redeeming is rate-limited: the 21st try in a minute is 429 with Retry-After', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const { join_link } = await makeLink()
    for (let i = 0; i < 20; i++) await failsWith(redeem(`guess${i}`), 403)
    const err = await failsWith(redeem(join_link.code), 429)
    expect(Number(err.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // Refused before it was looked at: the link still works once the minute has passed.
    clock.advance(MINUTE)
    expect((await redeem(join_link.code)).token).toStartWith('hark_agent_')
  })
})

describe('POST /v1/join: re-keying a channel', () => {
  test("the channel's old token is 401 at once; the new one works on the same channel", async () => {
    s = await startTestServer()
    const { message } = await s.agent.send({ body: { text: 'before re-key' } })
    const old = s.agent
    const { join_link } = await makeLink({ channel_id: s.channelId })
    expect(join_link.channel_id).toBe(s.channelId)
    // Until redeemed, the old token works.
    await old.channel()
    const joined = await redeem(join_link.code)
    expect(joined.channel).toEqual({ id: s.channelId, label: 'Test agent' })
    await failsWith(old.channel(), 401)
    await failsWith(old.send({ body: { text: 'x' } }), 401)
    const fresh = s.agentClient(joined.token)
    expect((await fresh.channel()).channel.id).toBe(s.channelId)
    // The history stays with the channel.
    const feed = await fresh.feed()
    expect(feed.messages.map((m) => m.id)).toEqual([message.id])
  })

  test('revokes every token of that channel, and only of that channel', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Other')
    // A second live token on the same channel, as `hark admin` could have made.
    const user = (await s.ctx.store.users.byEmail(s.ownerEmail)) as UserRow
    const channel = (await s.ctx.store.channels.byId(s.channelId)) as ChannelRow
    const spare = (await issueToken(s.ctx, 'agent', user, channel, 'spare')).token
    await s.agentClient(spare).channel()
    const joined = await redeem((await makeLink({ channel_id: s.channelId })).join_link.code)
    await failsWith(s.agent.channel(), 401)
    await failsWith(s.agentClient(spare).channel(), 401)
    expect((await s.agentClient(joined.token).channel()).channel.id).toBe(s.channelId)
    expect((await other.agent.channel()).channel.label).toBe('Other')
    expect(count(s.ctx, 'tokens', 'channel_id = ?1 AND revoked_at IS NULL', s.channelId)).toBe(1)
  })

  test('a label next to channel_id is ignored: the channel keeps its name', async () => {
    s = await startTestServer()
    const { join_link } = await makeLink({ channel_id: s.channelId, label: 'Renamed?' })
    expect((await redeem(join_link.code)).channel.label).toBe('Test agent')
  })

  test('a link for a channel deleted since is 403', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Doomed')
    const { join_link } = await makeLink({ channel_id: other.channelId })
    await s.person.call('DELETE', `/v1/app/channels/${other.channelId}`)
    await failsWith(redeem(join_link.code), 403)
    expect((await s.person.channels()).channels.map((c) => c.id)).toEqual([s.channelId])
  })

  test('is single use and expires like any link', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    const a = await makeLink({ channel_id: s.channelId })
    const b = await makeLink({ channel_id: s.channelId })
    const joined = await redeem(a.join_link.code)
    await failsWith(redeem(a.join_link.code), 403)
    clock.advance(15 * MINUTE)
    await failsWith(redeem(b.join_link.code), 403)
    // The failed tries revoked nothing.
    expect((await s.agentClient(joined.token).channel()).channel.id).toBe(s.channelId)
  })
})
