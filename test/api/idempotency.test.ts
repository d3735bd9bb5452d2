import { afterAll, describe, expect, test } from 'bun:test'
import { KEY_TTL_MS } from '../../src/access/idempotency/keys.ts'
import { generateKeyPair } from '../../src/shared/secret-crypto.ts'
import { type Reply, startTestServer, TestClock, type TestServer } from '../harness.ts'
import { AGENT_ROUTES } from './routes.ts'

/**
 * `Idempotency-Key` on the agent's writes (PRODUCT.md "Safe retries"): the same key and request
 * answer the first result again and write nothing; another request with the key is 409; a bad
 * key is 400; keys live 24 h per channel. Uploads and concurrency: idempotency-uploads.test.ts.
 */
const clock = new TestClock()
const s = await startTestServer({ clock })
afterAll(() => s.close())

let n = 0
const freshKey = () => `key-${++n}-${crypto.randomUUID()}`

interface Call {
  method: string
  path: string
  json?: unknown
}

const send = (c: Call, key?: string, server: TestServer = s, token = server.agentToken) =>
  server.request(c.method, c.path, {
    token,
    json: c.json,
    headers: key === undefined ? {} : { 'idempotency-key': key },
  })

const count = (sql: string, ...args: string[]) =>
  (s.ctx.db.query(sql).get(...args) as { n: number }).n
/** Rows changed by any statement since the database opened: a replay must not move it. */
const changes = () => count('SELECT total_changes() AS n')
const messagesWith = (text: string) =>
  count("SELECT count(*) AS n FROM messages WHERE json_extract(body, '$.text') = ?", text)

const expectReplay = (first: Reply, again: Reply) => {
  expect(first.status).toBe(200)
  expect(first.headers.get('idempotent-replayed')).toBeNull()
  expect(again.status).toBe(first.status)
  expect(again.text).toBe(first.text)
  expect(again.headers.get('idempotent-replayed')).toBe('true')
  expect(again.headers.get('content-type')).toContain('application/json')
}

describe('the same key and the same request', () => {
  test('answers the first result again and writes nothing', async () => {
    const key = freshKey()
    const call = { method: 'POST', path: '/v1/messages', json: { body: { text: 'once only' } } }
    const first = await send(call, key)
    const before = changes()
    const again = await send(call, key)
    expectReplay(first, again)
    expect(changes()).toBe(before)
    expect(messagesWith('once only')).toBe(1)
    // A third time, still the first answer: the message id the agent already knows.
    expect((await send(call, key)).body.message.id).toBe(first.body.message.id)
  })

  test('the same body with its keys in another order is the same request', async () => {
    const key = freshKey()
    const path = '/v1/messages'
    const first = await s.request('POST', path, {
      token: s.agentToken,
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      body: '{"body":{"title":"T","text":"ordered"},"silent":true}',
    })
    const again = await s.request('POST', path, {
      token: s.agentToken,
      headers: { 'idempotency-key': key, 'content-type': 'application/json' },
      body: '{ "silent": true, "body": { "text": "ordered", "title": "T" } }',
    })
    expectReplay(first, again)
    expect(messagesWith('ordered')).toBe(1)
  })

  test('without a key every request writes, as before', async () => {
    const call = { method: 'POST', path: '/v1/messages', json: { body: { text: 'unkeyed' } } }
    const a = await send(call)
    const b = await send(call)
    expect([a.status, b.status]).toEqual([200, 200])
    expect(b.headers.get('idempotent-replayed')).toBeNull()
    expect(messagesWith('unkeyed')).toBe(2)
  })
})

describe('the same key with another request', () => {
  test('is 409 naming the header, and writes nothing', async () => {
    const key = freshKey()
    await send({ method: 'POST', path: '/v1/messages', json: { body: { text: 'first' } } }, key)
    const before = changes()
    const others: Call[] = [
      // Another body, another path, another method on the same path.
      { method: 'POST', path: '/v1/messages', json: { body: { text: 'second' } } },
      { method: 'PUT', path: '/v1/pins/k', json: { body: { text: 'first' } } },
      { method: 'PATCH', path: '/v1/agent', json: { label: 'first' } },
    ]
    for (const other of others) {
      const r = await send(other, key)
      expect(r.status).toBe(409)
      expect(r.body.field).toBe('Idempotency-Key')
      expect(r.body.error).toContain('Idempotency-Key')
      expect(r.body.error).toContain('different request')
    }
    expect(changes()).toBe(before)
    expect(messagesWith('second')).toBe(0)
  })
})

describe('a bad key', () => {
  const bad: [string, string][] = [
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a tab', 'a\tb'],
    ['not ASCII', 'clé'],
  ]
  for (const [what, key] of bad) {
    test(`${what}: 400 naming Idempotency-Key, nothing written`, async () => {
      const before = changes()
      const r = await send(
        { method: 'POST', path: '/v1/messages', json: { body: { text: `bad ${what}` } } },
        key,
      )
      expect(r.status).toBe(400)
      expect(r.body.field).toBe('Idempotency-Key')
      expect(r.body.error).toContain('Idempotency-Key')
      expect(changes()).toBe(before)
    })
  }

  test('255 printable characters, spaces and symbols included, are a key', async () => {
    const key = `${'~ !"#$%&()*+,-./:;<=>?@[\\]^_`{|}'.repeat(8)}`.slice(0, 255)
    expect(key).toHaveLength(255)
    const call = { method: 'POST', path: '/v1/messages', json: { body: { text: 'long key' } } }
    expectReplay(await send(call, key), await send(call, key))
  })
})

describe('an answer that was an error', () => {
  test('is not kept: nothing was written, so the key may write later', async () => {
    const key = freshKey()
    const missing = await send(
      { method: 'PATCH', path: '/v1/messages/msg_nope', json: { text: 'x' } },
      key,
    )
    expect(missing.status).toBe(404)
    const call = { method: 'POST', path: '/v1/messages', json: { body: { text: 'after' } } }
    const r = await send(call, key)
    expect(r.status).toBe(200)
    expect(r.headers.get('idempotent-replayed')).toBeNull()
  })

  test('a write and its key commit together: a failed key rolls the write back', async () => {
    const key = freshKey()
    const call = { method: 'POST', path: '/v1/messages', json: { body: { text: 'atomic' } } }
    const store = s.ctx.store.idempotency
    const claim = store.claim
    // As if the process died between the message and its key: neither may remain.
    store.claim = () => {
      throw new Error('disk gone')
    }
    try {
      expect((await send(call, key)).status).toBe(500)
    } finally {
      store.claim = claim
    }
    expect(messagesWith('atomic')).toBe(0)
    expect(count('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?', key)).toBe(0)
    // The retry writes it, once.
    const first = await send(call, key)
    expectReplay(first, await send(call, key))
    expect(messagesWith('atomic')).toBe(1)
  })
})

describe('keys live 24 hours, per channel', () => {
  test('the first answer for 24 h; after that the key is new again, and swept', async () => {
    const key = freshKey()
    const call = { method: 'POST', path: '/v1/messages', json: { body: { text: 'a day' } } }
    const first = await send(call, key)
    clock.advance(KEY_TTL_MS - 1)
    expectReplay(first, await send(call, key))
    expect((await send({ ...call, json: { body: { text: 'a day later' } } }, key)).status).toBe(409)
    clock.advance(1)
    const later = await send(call, key)
    expect(later.status).toBe(200)
    expect(later.headers.get('idempotent-replayed')).toBeNull()
    expect(later.body.message.id).not.toBe(first.body.message.id)
    expect(messagesWith('a day')).toBe(2)
    // The expired key's row was replaced, and older keys of the table were swept on the way.
    expect(count('SELECT count(*) AS n FROM idempotency_keys WHERE key = ?', key)).toBe(1)
    const now = clock.now()
    expect(
      count(
        'SELECT count(*) AS n FROM idempotency_keys WHERE created_at <= ?',
        String(now - KEY_TTL_MS),
      ),
    ).toBe(0)
    // And another request may take an expired key.
    clock.advance(KEY_TTL_MS)
    const other = await send({ ...call, json: { body: { text: 'a day on' } } }, key)
    expect(other.status).toBe(200)
  })

  test("another channel's same key is its own", async () => {
    const key = freshKey()
    const other = await s.addChannel('Second agent')
    const call = { method: 'POST', path: '/v1/messages', json: { body: { text: 'twin' } } }
    const mine = await send(call, key)
    const theirs = await send(call, key, s, other.token)
    expect([mine.status, theirs.status]).toEqual([200, 200])
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(theirs.body.message.id).not.toBe(mine.body.message.id)
    expect(theirs.body.message.channel_id).toBe(other.channelId)
    // There the key now holds that channel's own request: another one is 409 there too.
    const different = await send(
      { ...call, json: { body: { text: 'not twin' } } },
      key,
      s,
      other.token,
    )
    expect(different.status).toBe(409)
    expectReplay(mine, await send(call, key))
  })
})

describe('every agent POST, PUT and PATCH takes a key', () => {
  test('each route replays its first answer and refuses another request', async () => {
    const { message } = await s.agent.send({ body: { text: 'to edit' } })
    const question = await s.agent.send({
      body: { text: 'q', blocks: [{ type: 'confirm', id: 'c', label: 'OK' }] },
    })
    const human = await s.person.send(s.channelId, { text: 'from the person' })
    await s.agent.pin('k', { body: { text: 'pinned' } })
    const { publicKey } = await generateKeyPair()
    // A policy of the channel, as a signed one is stored (its signature is the agent's concern).
    const channel = await s.ctx.store.channels.byId(s.channelId)
    await s.ctx.writes.apply(async (tx) => {
      await tx.store.policies.insert({
        id: 'pol_idem',
        user_id: channel?.user_id as string,
        channel_id: s.channelId,
        claim:
          '{"rule":{"effect":"allow","match":{"kind":"tool"},"tool":"T","where":{"kind":"all"}}}',
        proof: '{}',
        created_at: s.ctx.clock.now(),
        expires_at: s.ctx.clock.now() + 3600_000,
      })
    })
    const calls: (Call & { other: unknown })[] = [
      {
        method: 'POST',
        path: '/v1/policies/pol_idem/uses',
        json: { summary: 'ran T' },
        other: { summary: 'ran T again' },
      },
      {
        method: 'POST',
        path: '/v1/messages',
        json: { body: { text: 'r' } },
        other: { body: { text: 'r2' } },
      },
      {
        method: 'PATCH',
        path: `/v1/messages/${message.id}`,
        json: { text: 'edited' },
        other: { text: 'edited again' },
      },
      {
        method: 'PUT',
        path: `/v1/messages/${message.id}`,
        json: { body: { text: 'replaced' } },
        other: { body: { text: 'replaced again' } },
      },
      {
        method: 'POST',
        path: `/v1/messages/${human.message.id}/state`,
        json: { state: 'working' },
        other: { state: 'done' },
      },
      {
        method: 'POST',
        path: `/v1/messages/${question.message.id}/cancel`,
        json: { reason: 'not needed' },
        other: { reason: 'other' },
      },
      {
        method: 'PUT',
        path: '/v1/pins/k',
        json: { body: { text: 'p2' } },
        other: { body: { text: 'p9' } },
      },
      { method: 'PATCH', path: '/v1/pins/k', json: { text: 'p3' }, other: { text: 'p4' } },
      { method: 'PATCH', path: '/v1/agent', json: { label: 'Renamed' }, other: { label: 'R2' } },
      {
        method: 'POST',
        path: '/v1/secrets',
        json: { name: 'API key', public_key: publicKey },
        other: { name: 'Other key', public_key: publicKey },
      },
    ]
    // The routes table of the auth tests lists every agent route: none is left out here (the
    // upload, POST /v1/files, has its own tests).
    const pattern = (p: string) => p.replace(/(msg|pol)_[A-Za-z0-9]+|\?.*$/g, ':id')
    const covered = new Set(calls.map((c) => `${c.method} ${pattern(c.path)}`))
    for (const r of AGENT_ROUTES.filter((r) => ['POST', 'PUT', 'PATCH'].includes(r.method))) {
      if (r.path.startsWith('/v1/files')) continue
      expect(covered).toContain(`${r.method} ${pattern(r.path)}`)
    }
    for (const call of calls) {
      const key = freshKey()
      const first = await send(call, key)
      expect(`${call.method} ${call.path} ${first.status}`).toBe(`${call.method} ${call.path} 200`)
      const before = changes()
      expectReplay(first, await send(call, key))
      const other = await send({ ...call, json: call.other }, key)
      expect(`${call.method} ${call.path} ${other.status}`).toBe(`${call.method} ${call.path} 409`)
      expect(changes()).toBe(before)
    }
  })
})
