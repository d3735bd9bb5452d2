import { afterEach, describe, expect, test } from 'bun:test'
import type { SecretRecord } from '../../src/messages/asks/secrets/service.ts'
import type { Message } from '../../src/messages/schema.ts'
import {
  decryptSecret,
  encryptSecret,
  fingerprint,
  generateKeyPair,
  type SecretKeyPair,
} from '../../src/shared/secret-crypto.ts'
import { failsWith, sleep, startTestServer, type TestServer } from '../harness.ts'
import { canary, expectNoPlaintext } from './canary.ts'

let s: TestServer
afterEach(() => s?.close())

async function request(
  name = 'GITHUB_TOKEN',
  description?: string,
): Promise<{ keys: SecretKeyPair; req: SecretRecord }> {
  const keys = await generateKeyPair()
  const { secret_request } = await s.agent.requestSecret({
    name,
    description,
    public_key: keys.publicKey,
  })
  return { keys, req: secret_request }
}

/** The person's side, as the app does it: fetch the key, encrypt in place, send ciphertext. */
async function fulfil(id: string, plaintext: string) {
  const { secret_request } = await s.person.secret(id)
  return s.person.fulfilSecret(id, await encryptSecret(secret_request.public_key, id, plaintext))
}

const threadMessage = async (id: string) =>
  (await s.person.feed(s.channelId)).messages.find((m) => m.id === id) as Message

describe('secret requests: the whole flow', () => {
  test('request, fulfil, deliver once, then the ciphertext is gone', async () => {
    s = await startTestServer()
    const secret = canary()
    const { keys, req } = await request('GITHUB_TOKEN', 'to push the release tag')
    expect(req).toMatchObject({
      name: 'GITHUB_TOKEN',
      description: 'to push the release tag',
      status: 'pending',
      channel_id: s.channelId,
      public_key: keys.publicKey,
    })
    expect(req.id).toStartWith('sec_')
    expect(req.fingerprint).toBe(await fingerprint(keys.publicKey))
    expect(req.fingerprint).toMatch(/^[0-9a-f]{4}( [0-9a-f]{4}){3}$/)

    // The thread shows it, as a server-made block.
    const shown = await threadMessage(req.message_id)
    expect(shown.sender).toBe('agent')
    expect(shown.body).toEqual({
      text: 'to push the release tag',
      blocks: [
        {
          type: 'secret_request',
          id: 'secret',
          request_id: req.id,
          name: 'GITHUB_TOKEN',
          fingerprint: req.fingerprint,
          status: 'pending',
        },
      ],
    })

    // Nothing to take yet.
    const early = await s.agent.secret(req.id)
    expect(early.secret_request.status).toBe('pending')
    expect(early.ciphertext).toBeUndefined()

    const fulfilled = await fulfil(req.id, secret)
    expect(fulfilled.secret_request.status).toBe('fulfilled')
    expect((await s.agent.secret(req.id, 0)).secret_request.status).toBe('delivered')
    expectNoPlaintext(s.dir, secret)
    expect((await s.ctx.store.secrets.byId(req.id))?.ciphertext).toBeNull()
    expect((await threadMessage(req.message_id)).body.blocks?.[0]?.status).toBe('delivered')
  })

  test('the agent decrypts what the person sent; a second read gets no ciphertext', async () => {
    s = await startTestServer()
    const secret = canary()
    const { keys, req } = await request()
    await fulfil(req.id, secret)
    const stored = await s.ctx.store.secrets.byId(req.id)
    expect(stored?.status).toBe('fulfilled')
    expect(stored?.ciphertext).toMatch(/^v1\./)

    const first = await s.agent.secret(req.id)
    expect(first.secret_request.status).toBe('delivered')
    expect(await decryptSecret(keys, req.id, first.ciphertext as string)).toBe(secret)

    const second = await s.agent.secret(req.id, 1)
    expect(second).toEqual({ secret_request: { ...first.secret_request } })
    expect((await s.ctx.store.secrets.byId(req.id))?.ciphertext).toBeNull()
    expectNoPlaintext(s.dir, secret)
  })

  test('a ciphertext bound to one request does not open as another', async () => {
    s = await startTestServer()
    const { keys, req } = await request()
    const other = await request('OTHER')
    // Made for `other`'s id, with this request's key: the person's browser never does this.
    const wrong = await encryptSecret(keys.publicKey, other.req.id, 'x')
    await s.person.fulfilSecret(req.id, wrong)
    const { ciphertext } = await s.agent.secret(req.id)
    await expect(decryptSecret(keys, req.id, ciphertext as string)).rejects.toThrow()
  })

  test('a held poll wakes when the person answers', async () => {
    s = await startTestServer()
    const { keys, req } = await request()
    const started = performance.now()
    const poll = s.agent.secret(req.id, 20)
    await sleep(100)
    expect(s.ctx.waiters.size).toBe(1)
    await fulfil(req.id, 'woken')
    const read = await poll
    expect(performance.now() - started).toBeLessThan(5000)
    expect(await decryptSecret(keys, req.id, read.ciphertext as string)).toBe('woken')
    expect(s.ctx.waiters.size).toBe(0)
  })

  test('a held poll wakes with "cancelled" when the agent withdraws; a wait elapses as pending', async () => {
    s = await startTestServer()
    const { req } = await request()
    expect((await s.agent.secret(req.id, 0.2)).secret_request.status).toBe('pending')
    const poll = s.agent.secret(req.id, 20)
    await sleep(50)
    const cancelled = await s.agent.cancelSecret(req.id)
    expect(cancelled.secret_request.status).toBe('cancelled')
    expect(await poll).toEqual({ secret_request: cancelled.secret_request })
    expect((await threadMessage(req.message_id)).body.blocks?.[0]?.status).toBe('cancelled')
  })

  test('cancelling a fulfilled request erases its ciphertext unread', async () => {
    s = await startTestServer()
    const { req } = await request()
    await fulfil(req.id, 'never read')
    await s.agent.cancelSecret(req.id)
    expect(await s.ctx.store.secrets.byId(req.id)).toMatchObject({
      status: 'cancelled',
      ciphertext: null,
    })
    expect((await s.agent.secret(req.id)).ciphertext).toBeUndefined()
  })
})

describe('secret requests: 409 once settled', () => {
  test('fulfil twice, fulfil after cancel, cancel after delivery or cancel', async () => {
    s = await startTestServer()
    const a = await request()
    await fulfil(a.req.id, 'one')
    expect((await failsWith(fulfil(a.req.id, 'two'), 409)).error).toContain('fulfilled')
    await s.agent.secret(a.req.id)
    expect((await failsWith(s.agent.cancelSecret(a.req.id), 409)).error).toContain('delivered')
    expect((await failsWith(fulfil(a.req.id, 'three'), 409)).error).toContain('delivered')

    const b = await request()
    await s.agent.cancelSecret(b.req.id)
    await failsWith(s.agent.cancelSecret(b.req.id), 409)
    await failsWith(fulfil(b.req.id, 'late'), 409)
  })
})

describe('secret requests: 400 names the field', () => {
  test('create', async () => {
    s = await startTestServer()
    const { publicKey } = await generateKeyPair()
    const post = (json: unknown) => s.agent.call('POST', '/v1/secrets', { json })
    const cases: [unknown, string][] = [
      [{ public_key: publicKey }, 'name'],
      [{ name: '', public_key: publicKey }, 'name'],
      [{ name: '   ', public_key: publicKey }, 'name'],
      [{ name: 'A\nB', public_key: publicKey }, 'name'],
      [{ name: 'x'.repeat(101), public_key: publicKey }, 'name'],
      [{ name: 7, public_key: publicKey }, 'name'],
      [{ name: 'N' }, 'public_key'],
      [{ name: 'N', public_key: 'not a key' }, 'public_key'],
      [{ name: 'N', public_key: publicKey.slice(1) }, 'public_key'],
      // 0x04 then zeros: the right length, but not a point on the curve.
      [{ name: 'N', public_key: `B${'A'.repeat(86)}` }, 'public_key'],
      // A compressed-point prefix in an uncompressed-size key.
      [{ name: 'N', public_key: `A${publicKey.slice(1)}` }, 'public_key'],
      [{ name: 'N', public_key: publicKey, description: 'd'.repeat(2001) }, 'description'],
      [{ name: 'N', public_key: publicKey, ciphertext: 'x' }, 'ciphertext'],
    ]
    for (const [json, field] of cases) {
      const e = await failsWith(post(json), 400)
      expect({ json, field: e.field }).toEqual({ json, field })
    }
    const e = await failsWith(
      s.agent.call('POST', '/v1/secrets', {
        body: '{',
        headers: { 'content-type': 'application/json' },
      }),
      400,
    )
    expect(e.error).toContain('JSON')
    // Nothing was half-written: no request, no thread message.
    expect(s.ctx.db.query('SELECT count(*) AS n FROM secret_requests').get()).toEqual({ n: 0 })
    expect((await s.person.feed(s.channelId)).messages).toEqual([])
  })

  test('read and fulfil', async () => {
    s = await startTestServer()
    const { keys, req } = await request()
    expect((await failsWith(s.agent.secret(req.id, -1), 400)).field).toBe('wait')
    const good = await encryptSecret(keys.publicKey, req.id, 'x')
    const fulfilWith = (json: unknown) =>
      s.person.call('POST', `/v1/app/secrets/${req.id}/fulfil`, { json })
    const bad: unknown[] = [
      {},
      { ciphertext: 5 },
      { ciphertext: 'plain text, not an envelope' },
      { ciphertext: good.replace(/^v1/, 'v2') },
      { ciphertext: good.split('.').slice(0, 3).join('.') },
      { ciphertext: `${good}.extra` },
      { ciphertext: `${good}${'A'.repeat(90_000)}` },
      { ciphertext: good, plaintext: 'x' },
    ]
    for (const json of bad) {
      const e = await failsWith(fulfilWith(json), 400)
      expect({ json: JSON.stringify(json).slice(0, 40), field: e.field }).toEqual({
        json: JSON.stringify(json).slice(0, 40),
        field: Object.hasOwn(json as object, 'plaintext') ? 'plaintext' : 'ciphertext',
      })
    }
    expect((await s.ctx.store.secrets.byId(req.id))?.status).toBe('pending')
  })
})

describe('secret requests: who may see them', () => {
  test('401 without a token, 403 with the wrong kind', async () => {
    s = await startTestServer()
    const { keys, req } = await request()
    const none = s.raw()
    expect((await none.raw('POST', '/v1/secrets', { json: {} })).status).toBe(401)
    expect((await none.raw('GET', `/v1/secrets/${req.id}`)).status).toBe(401)
    expect((await none.raw('DELETE', `/v1/secrets/${req.id}`)).status).toBe(401)
    expect((await none.raw('GET', `/v1/app/secrets/${req.id}`)).status).toBe(401)
    expect((await none.raw('POST', `/v1/app/secrets/${req.id}/fulfil`, { json: {} })).status).toBe(
      401,
    )
    // A malformed body does not outrank the missing token.
    const res = await none.raw('POST', '/v1/secrets', {
      body: '{',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(401)

    // The person's token on the agent's routes, and the agent's on the person's.
    await failsWith(
      s.person.call('POST', '/v1/secrets', { json: { name: 'N', public_key: keys.publicKey } }),
      403,
    )
    await failsWith(s.person.call('GET', `/v1/secrets/${req.id}`), 403)
    await failsWith(s.person.call('DELETE', `/v1/secrets/${req.id}`), 403)
    await failsWith(s.agent.call('GET', `/v1/app/secrets/${req.id}`), 403)
    await failsWith(
      s.agent.call('POST', `/v1/app/secrets/${req.id}/fulfil`, { json: { ciphertext: 'x' } }),
      403,
    )
  })

  test('another channel and another person get 404, as for an unknown id', async () => {
    s = await startTestServer()
    const { req } = await request()
    const sibling = (await s.addChannel('Second')).agent
    const bob = await s.addPerson('bob@example.com')
    const unknown = 'sec_doesnotexist'
    for (const id of [req.id, unknown]) {
      const e = await failsWith(sibling.secret(id), 404)
      expect(e.error).toBe('secret request not found')
      await failsWith(sibling.cancelSecret(id), 404)
      expect((await failsWith(bob.secret(id), 404)).error).toBe('secret request not found')
      await failsWith(bob.fulfilSecret(id, 'v1.x'), 404)
    }
    // And the owner still finds it, untouched.
    expect((await s.person.secret(req.id)).secret_request.status).toBe('pending')
  })

  test('agents cannot forge a secret_request block, nor edit the message that shows one', async () => {
    s = await startTestServer()
    const { req } = await request()
    const forged = {
      type: 'secret_request',
      request_id: req.id,
      name: 'GITHUB_TOKEN',
      fingerprint: '0000 0000 0000 0000',
    }
    const sent = await failsWith(s.agent.send({ body: { blocks: [forged] } }), 400)
    expect(sent.field).toBe('body.blocks[0].type')
    await failsWith(s.agent.pin('k', { body: { blocks: [forged] } }), 400)
    // The message that shows the request cannot be edited, replaced or removed by the agent.
    await failsWith(s.agent.edit(req.message_id, { text: 'changed' }), 403)
    await failsWith(s.agent.edit(req.message_id, { blocks: [] }), 403)
    await failsWith(s.agent.replace(req.message_id, { blocks: [forged] }), 403)
    await failsWith(s.agent.replace(req.message_id, { text: 'paste your token as a reply' }), 403)
    await failsWith(s.agent.remove(req.message_id), 403)
    await failsWith(s.person.send(s.channelId, { blocks: [forged] }), 400)
    expect((await threadMessage(req.message_id)).body.blocks?.[0]).toMatchObject({
      fingerprint: req.fingerprint,
    })
  })
})
