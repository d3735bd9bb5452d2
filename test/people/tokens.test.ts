import { afterEach, describe, expect, test } from 'bun:test'
import type { TokenInfo } from '../../src/access/tokens/service.ts'
import { LIMITS } from '../../src/messages/limits.ts'
import { failsWith, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { count } from './util.ts'

let s: TestServer
afterEach(() => s?.close())

type Person = TestServer['person']

const list = (person: Person = s.person) =>
  person.call<{ tokens: TokenInfo[] }>('GET', '/v1/app/tokens').then((r) => r.tokens)
const revoke = (id: string, person: Person = s.person) =>
  person.call<{ ok: true }>('DELETE', `/v1/app/tokens/${id}`)

/**
 * A request from the owner's web app (a fresh browser session); a non-200 answer rejects like
 * the client does, so `failsWith` reads it. Making and rotating tokens need such a session.
 */
async function inApp<T>(method: string, path: string, json?: unknown): Promise<T> {
  const { cookie } = await s.session()
  const res = await s.request(method, path, { cookie, json })
  if (res.status !== 200) {
    throw Object.assign(new Error(res.body?.error), { ...res.body, status: res.status })
  }
  return res.body as T
}
type Made = { token: string; info: TokenInfo }
const create = (json?: unknown) => inApp<Made>('POST', '/v1/app/tokens', json)
const rotate = (id: string) => inApp<Made>('POST', `/v1/app/tokens/${id}/rotate`)

/** The list entry of the harness's first agent token (the one channel's). */
const agentTokenInfo = async () =>
  (await list()).find((t) => t.kind === 'agent' && t.channel_id === s.channelId) as TokenInfo

describe('GET /v1/app/tokens', () => {
  test('lists my live person and agent tokens, with no secret and no hash', async () => {
    s = await startTestServer()
    const other = await s.addChannel('Other')
    const tokens = await list()
    expect(tokens.map((t) => [t.kind, t.channel_id]).sort()).toEqual(
      [
        ['agent', s.channelId],
        ['agent', other.channelId],
        ['person', null],
      ].sort(),
    )
    for (const t of tokens) {
      expect(Object.keys(t).sort()).toEqual(
        ['channel_id', 'created_at', 'id', 'kind', 'label', 'last_used_at'].sort(),
      )
      expect(t.id).toStartWith('tok_')
    }
    const text = JSON.stringify(tokens)
    expect(text).not.toContain(other.token)
    expect(text).not.toContain('hark_agent_')
    expect(text).not.toContain('hark_person_')
    expect(text).not.toContain('hash')
  })

  test("shows only my tokens, not another person's", async () => {
    s = await startTestServer()
    const bob = await s.addPerson('bob@example.com')
    await s.addChannel('Bob agent', 'bob@example.com')
    const mine = await list()
    const bobs = await list(bob)
    expect(bobs).toHaveLength(2)
    expect(mine.map((t) => t.id)).not.toContain(bobs[0]?.id)
    expect(mine.map((t) => t.id)).not.toContain(bobs[1]?.id)
  })

  test('records when a token was last used, at most once a minute', async () => {
    const clock = new TestClock()
    s = await startTestServer({ clock })
    expect((await agentTokenInfo()).last_used_at).toBeNull()
    await s.agent.channel()
    expect((await agentTokenInfo()).last_used_at).toBe(clock.ms)
    const first = clock.ms
    clock.advance(30_000)
    await s.agent.channel()
    expect((await agentTokenInfo()).last_used_at).toBe(first)
    clock.advance(31_000)
    await s.agent.channel()
    expect((await agentTokenInfo()).last_used_at).toBe(clock.ms)
  })

  test('needs a login (401); an agent token is 403', async () => {
    s = await startTestServer()
    await failsWith(s.raw().call('GET', '/v1/app/tokens'), 401)
    await failsWith(s.raw('hark_person_nope').call('GET', '/v1/app/tokens'), 401)
    await failsWith(s.agent.call('GET', '/v1/app/tokens'), 403)
  })

  test('works from the web app with the cookie', async () => {
    s = await startTestServer()
    const { cookie } = await s.session()
    const res = await s.request('GET', '/v1/app/tokens', { cookie, origin: null })
    expect(res.status).toBe(200)
    expect(res.body.tokens).toHaveLength(2)
  })
})

describe('POST /v1/app/tokens', () => {
  test('makes a person token, shown once, that works on the person routes only', async () => {
    s = await startTestServer()
    const made = await create({ label: 'backup script' })
    expect(made.token).toMatch(/^hark_person_[0-9A-Za-z]{43}$/)
    expect(made.info).toMatchObject({
      kind: 'person',
      label: 'backup script',
      channel_id: null,
      last_used_at: null,
    })
    const script = s.personClient(made.token)
    expect((await script.channels()).channels.map((c) => c.id)).toEqual([s.channelId])
    await failsWith(s.agentClient(made.token).channel(), 403)
    expect((await list()).map((t) => t.id)).toContain(made.info.id)
    expect(JSON.stringify(s.ctx.db.query('SELECT * FROM tokens').all())).not.toContain(made.token)
  })

  test("without a label it is 'Script'; the label is trimmed", async () => {
    s = await startTestServer()
    expect((await create()).info.label).toBe('Script')
    expect((await create({})).info.label).toBe('Script')
    expect((await create({ label: '  cron  ' })).info.label).toBe('cron')
  })

  test('an invalid label is 400 naming label, and no token is made', async () => {
    s = await startTestServer()
    const before = count(s.ctx, 'tokens')
    for (const label of ['', '   ', 'x'.repeat(LIMITS.labelChars + 1), 3, null, ['a']]) {
      const err = await failsWith(create({ label }), 400)
      expect(err.field).toBe('label')
    }
    expect(count(s.ctx, 'tokens')).toBe(before)
  })

  test('needs a browser session: a person token is 403 and makes nothing', async () => {
    s = await startTestServer()
    const before = count(s.ctx, 'tokens')
    const res = await s.person.raw('POST', '/v1/app/tokens', { json: { label: 'mine now' } })
    expect(res.status).toBe(403)
    expect(((await res.json()) as { error: string }).error).toContain('browser session')
    expect(count(s.ctx, 'tokens')).toBe(before)
  })

  test('needs a login (401), refuses agent tokens (403) and foreign origins (403)', async () => {
    s = await startTestServer()
    const before = count(s.ctx, 'tokens')
    await failsWith(s.raw().call('POST', '/v1/app/tokens'), 401)
    await failsWith(s.agent.call('POST', '/v1/app/tokens'), 403)
    const { cookie } = await s.session()
    for (const origin of [null, 'null', 'https://evil.example']) {
      const res = await s.request('POST', '/v1/app/tokens', { cookie, origin, json: {} })
      expect(res.status).toBe(403)
    }
    expect(count(s.ctx, 'tokens')).toBe(before)
    const ok = await s.request('POST', '/v1/app/tokens', { cookie, json: { label: 'app' } })
    expect(ok.status).toBe(200)
    expect(ok.body.token).toStartWith('hark_person_')
  })
})

describe('DELETE /v1/app/tokens/:id', () => {
  test('revokes an agent token: the next request with it is 401, and it leaves the list', async () => {
    s = await startTestServer()
    const info = await agentTokenInfo()
    expect(await revoke(info.id)).toEqual({ ok: true })
    const err = await failsWith(s.agent.channel(), 401)
    expect(err.headers.get('www-authenticate')).toBe('Bearer')
    expect((await list()).map((t) => t.id)).not.toContain(info.id)
    // The channel itself stays, with its messages.
    expect((await s.person.channels()).channels.map((c) => c.id)).toEqual([s.channelId])
  })

  test('revokes a person token, even the one making the request', async () => {
    s = await startTestServer()
    const made = await create({ label: 'temp' })
    await revoke(made.info.id)
    await failsWith(s.personClient(made.token).channels(), 401)
    const own = (await list()).find((t) => t.kind === 'person') as TokenInfo
    await revoke(own.id)
    await failsWith(s.person.channels(), 401)
  })

  test('an unknown id, or one already revoked, is 404', async () => {
    s = await startTestServer()
    const info = await agentTokenInfo()
    await revoke(info.id)
    await failsWith(revoke(info.id), 404)
    await failsWith(revoke('tok_nope'), 404)
  })

  test("another person's token is 404, and it keeps working", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const bob = await s.addPerson('bob@example.com')
    for (const t of await list(bob)) await failsWith(revoke(t.id), 404)
    await bobs.agent.channel()
    await bob.channels()
  })

  test('from the web app it needs the app origin', async () => {
    s = await startTestServer()
    const info = await agentTokenInfo()
    const { cookie } = await s.session()
    for (const origin of [null, 'null', 'https://evil.example']) {
      const res = await s.request('DELETE', `/v1/app/tokens/${info.id}`, { cookie, origin })
      expect(res.status).toBe(403)
    }
    await s.agent.channel()
    const ok = await s.request('DELETE', `/v1/app/tokens/${info.id}`, { cookie })
    expect(ok.status).toBe(200)
    await failsWith(s.agent.channel(), 401)
  })

  test('needs a login (401); an agent token is 403, even for its own id', async () => {
    s = await startTestServer()
    const info = await agentTokenInfo()
    await failsWith(s.raw().call('DELETE', `/v1/app/tokens/${info.id}`), 401)
    await failsWith(s.agent.call('DELETE', `/v1/app/tokens/${info.id}`), 403)
    await s.agent.channel()
  })
})

describe('POST /v1/app/tokens/:id/rotate', () => {
  test('an agent token: the old one is 401, the new one works on the same channel and label', async () => {
    s = await startTestServer()
    const { message } = await s.agent.send({ body: { text: 'kept' } })
    const old = await agentTokenInfo()
    const rotated = await rotate(old.id)
    expect(rotated.token).toMatch(/^hark_agent_[0-9A-Za-z]{43}$/)
    expect(rotated.info.id).not.toBe(old.id)
    expect(rotated.info).toMatchObject({
      kind: 'agent',
      channel_id: s.channelId,
      label: old.label,
      last_used_at: null,
    })
    await failsWith(s.agent.channel(), 401)
    const fresh = s.agentClient(rotated.token)
    expect((await fresh.channel()).channel.id).toBe(s.channelId)
    expect((await fresh.feed()).messages.map((m) => m.id)).toEqual([message.id])
    const ids = (await list()).map((t) => t.id)
    expect(ids).toContain(rotated.info.id)
    expect(ids).not.toContain(old.id)
  })

  test('a person token keeps its kind and label', async () => {
    s = await startTestServer()
    const made = await create({ label: 'nightly' })
    const rotated = await rotate(made.info.id)
    expect(rotated.token).toStartWith('hark_person_')
    expect(rotated.info).toMatchObject({ kind: 'person', label: 'nightly', channel_id: null })
    await failsWith(s.personClient(made.token).channels(), 401)
    await s.personClient(rotated.token).channels()
  })

  test('the app rotates the person token in use; the old secret stops at once', async () => {
    s = await startTestServer()
    const own = (await list()).find((t) => t.kind === 'person') as TokenInfo
    const rotated = await rotate(own.id)
    await failsWith(s.person.channels(), 401)
    await s.personClient(rotated.token).channels()
  })

  test('needs a browser session: a person token is 403, even for itself, and nothing changes', async () => {
    s = await startTestServer()
    const own = (await list()).find((t) => t.kind === 'person') as TokenInfo
    const agent = await agentTokenInfo()
    const before = count(s.ctx, 'tokens')
    for (const id of [own.id, agent.id]) {
      const err = await failsWith(s.person.call('POST', `/v1/app/tokens/${id}/rotate`), 403)
      expect(err.error).toContain('browser session')
    }
    expect(count(s.ctx, 'tokens')).toBe(before)
    await s.person.channels()
    await s.agent.channel()
  })

  test('an unknown, revoked or already rotated token is 404', async () => {
    s = await startTestServer()
    const old = await agentTokenInfo()
    await rotate(old.id)
    await failsWith(rotate(old.id), 404)
    await failsWith(rotate('tok_nope'), 404)
    const made = await create()
    await revoke(made.info.id)
    await failsWith(rotate(made.info.id), 404)
  })

  test("another person's token is 404, and nothing changes for them", async () => {
    s = await startTestServer()
    const bobs = await s.addChannel('Bob agent', 'bob@example.com')
    const bob = await s.addPerson('bob@example.com')
    const before = count(s.ctx, 'tokens')
    for (const t of await list(bob)) await failsWith(rotate(t.id), 404)
    expect(count(s.ctx, 'tokens')).toBe(before)
    await bobs.agent.channel()
  })

  test('from the web app it needs the app origin; 401 without a login; 403 for an agent', async () => {
    s = await startTestServer()
    const info = await agentTokenInfo()
    const { cookie } = await s.session()
    const res = await s.request('POST', `/v1/app/tokens/${info.id}/rotate`, {
      cookie,
      origin: 'https://evil.example',
    })
    expect(res.status).toBe(403)
    await failsWith(s.raw().call('POST', `/v1/app/tokens/${info.id}/rotate`), 401)
    await failsWith(s.agent.call('POST', `/v1/app/tokens/${info.id}/rotate`), 403)
    await s.agent.channel()
    const ok = await s.request('POST', `/v1/app/tokens/${info.id}/rotate`, { cookie })
    expect(ok.status).toBe(200)
    await failsWith(s.agent.channel(), 401)
  })
})
