import { afterAll, describe, expect, test } from 'bun:test'
import { addPersonToken } from '../../src/people/service.ts'
import { startTestServer } from '../harness.ts'

/**
 * `Idempotency-Key` on the person's write to the agent (`POST /v1/app/channels/:id/messages`),
 * which the app sends with every message so a queued send retried after a lost answer lands
 * once: the agent routes' semantics (idempotency.test.ts), with the person's keys kept apart.
 */
const s = await startTestServer()
afterAll(() => s.close())

const path = (channelId = s.channelId) => `/v1/app/channels/${channelId}/messages`
const write = (text: string, key?: string, token = s.personToken, channelId = s.channelId) =>
  s.request('POST', path(channelId), {
    token,
    json: { body: { text } },
    headers: key === undefined ? {} : { 'idempotency-key': key },
  })
const count = (text: string) =>
  (
    s.ctx.db
      .query("SELECT count(*) AS n FROM messages WHERE json_extract(body, '$.text') = ?")
      .get(text) as { n: number }
  ).n

describe("the person's send with a key", () => {
  test('the same key and body answer the first message again and write nothing', async () => {
    const key = crypto.randomUUID()
    const first = await write('person once', key)
    expect(first.status).toBe(200)
    expect(first.headers.get('idempotent-replayed')).toBeNull()
    const again = await write('person once', key)
    expect(again.status).toBe(200)
    expect(again.text).toBe(first.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(count('person once')).toBe(1)
  })

  test('the same key with another body is 409 naming the header, and writes nothing', async () => {
    const key = crypto.randomUUID()
    expect((await write('first body', key)).status).toBe(200)
    const other = await write('second body', key)
    expect(other.status).toBe(409)
    expect(other.body.field).toBe('Idempotency-Key')
    expect(count('second body')).toBe(0)
  })

  test('a malformed key is 400 and nothing is written', async () => {
    const bad = await write('bad key', 'x'.repeat(256))
    expect(bad.status).toBe(400)
    expect(count('bad key')).toBe(0)
  })

  test('without a key every send writes, as before', async () => {
    await write('unkeyed person')
    await write('unkeyed person')
    expect(count('unkeyed person')).toBe(2)
  })
})

describe('keys are per person', () => {
  test("another person's same key is theirs: both write", async () => {
    const key = crypto.randomUUID()
    const other = await s.addChannel('Their agent', 'other@example.com')
    const { token } = await addPersonToken(s.ctx, { email: 'other@example.com' })
    expect((await write('mine, keyed', key)).status).toBe(200)
    const theirs = await write('theirs, keyed', key, token, other.channelId)
    expect(theirs.status).toBe(200)
    expect(theirs.headers.get('idempotent-replayed')).toBeNull()
    expect(count('mine, keyed')).toBe(1)
    expect(count('theirs, keyed')).toBe(1)
    // And a person cannot reach another's channel with a key either: 404, as without one.
    expect((await write('not theirs', crypto.randomUUID(), token)).status).toBe(404)
  })

  test("the agent's key on the same channel is apart from the person's", async () => {
    const key = crypto.randomUUID()
    const agent = await s.request('POST', '/v1/messages', {
      token: s.agentToken,
      json: { body: { text: 'agent keyed' } },
      headers: { 'idempotency-key': key },
    })
    expect(agent.status).toBe(200)
    const person = await write('person keyed', key)
    expect(person.status).toBe(200)
    expect(person.headers.get('idempotent-replayed')).toBeNull()
    expect(count('agent keyed')).toBe(1)
    expect(count('person keyed')).toBe(1)
  })
})

describe("the person's upload with a key", () => {
  const upload = (bytes: string, key?: string, name = 'report.txt', token = s.personToken) =>
    s.request('POST', `/v1/app/channels/${s.channelId}/files?name=${name}`, {
      token,
      body: bytes,
      headers: {
        'content-type': 'text/plain',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
    })
  const files = (name: string) =>
    (s.ctx.db.query('SELECT count(*) AS n FROM files WHERE name = ?').get(name) as { n: number }).n

  test('the same bytes under the same key answer the first file again, stored once', async () => {
    const key = crypto.randomUUID()
    const first = await upload('queued offline', key, 'once.txt')
    expect(first.status).toBe(200)
    const again = await upload('queued offline', key, 'once.txt')
    expect(again.status).toBe(200)
    expect(again.text).toBe(first.text)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect(files('once.txt')).toBe(1)
  })

  test('other bytes under the key are 409 naming the header, and store nothing', async () => {
    const key = crypto.randomUUID()
    expect((await upload('first bytes', key, 'first.txt')).status).toBe(200)
    const other = await upload('other bytes', key, 'first.txt')
    expect(other.status).toBe(409)
    expect(other.body.field).toBe('Idempotency-Key')
    expect(files('first.txt')).toBe(1)
  })

  test("the agent's upload under the same key is apart from the person's", async () => {
    const key = crypto.randomUUID()
    const agent = await s.request('POST', '/v1/files?name=shared-key.txt', {
      token: s.agentToken,
      body: 'agent bytes',
      headers: { 'content-type': 'text/plain', 'idempotency-key': key },
    })
    expect(agent.status).toBe(200)
    const person = await upload('person bytes', key, 'shared-key.txt')
    expect(person.status).toBe(200)
    expect(person.headers.get('idempotent-replayed')).toBeNull()
    expect(files('shared-key.txt')).toBe(2)
  })

  test('without a key every upload stores, as before', async () => {
    await upload('twice', undefined, 'twice.txt')
    await upload('twice', undefined, 'twice.txt')
    expect(files('twice.txt')).toBe(2)
  })
})
