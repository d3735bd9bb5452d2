import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { createHash, createPublicKey, verify } from 'node:crypto'
import { chainHash } from '../../src/messages/asks/audit/service.ts'
import { GENESIS_HASH } from '../../src/messages/asks/audit/store.ts'
import type { Block, Message } from '../../src/messages/schema.ts'
import { addChannel, addPersonToken } from '../../src/people/service.ts'
import { base64url } from '../../src/shared/proof.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, ORIGIN, RP_ID, startFreshServer } from '../passkeys/fixture.ts'
import { signAnswer } from './signing.ts'

/**
 * POST /v1/app/messages/:id/answer with a `proof`: the passkey's assertion over exactly this
 * answer. The server checks it before writing, stores it with the answer, hands it to the
 * agent, and appends every decision on an approval to a hash-chained audit log.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string; user: { id: string } }
let agentToken: string
let channelId: string

beforeEach(async () => {
  s = await startFreshServer()
  owner = await s.setUpOwner()
  const made = await addChannel(s.ctx, { email: 'owner@example.com', label: 'CI' })
  agentToken = made.token
  channelId = made.channel.id
})
afterEach(() => s.close())

const approval: Block = {
  type: 'approval',
  id: 'a',
  tool: 'Bash',
  input: { command: 'make deploy' },
  scopes: ['once', 'session'],
}

async function ask(blocks: Block[] = [approval]): Promise<Message> {
  const r = await s.request('POST', '/v1/messages', {
    token: agentToken,
    json: { body: { blocks } },
  })
  return r.body.message
}

const answer = (id: string, body: unknown, cookie: string | undefined = owner.cookie) =>
  s.request('POST', `/v1/app/messages/${id}/answer`, { cookie, json: body })

const agentRead = async (id: string) =>
  (await s.request('GET', `/v1/asks/${id}`, { token: agentToken })).body

describe('a signed answer', () => {
  test('is checked, stored with the answer and handed to the agent', async () => {
    const q = await ask()
    const value = { decision: 'allow', scope: 'session' }
    const proof = await signAnswer(owner.authenticator, q, value)
    const r = await answer(q.id, { answer: value, proof })
    expect(r.status).toBe(200)
    const read = await agentRead(q.id)
    expect(read.answer).toEqual(value)
    expect(read.message.ask.proof).toEqual(proof)
    const feed = await s.request('GET', '/v1/messages?since=0', { token: agentToken })
    expect(feed.body.messages.find((m: Message) => m.id === q.id).ask.proof).toEqual(proof)
  })

  const refusals: [string, (q: Message, other: Message) => Promise<unknown>, string][] = [
    [
      'a signature over "deny" sent with "allow"',
      async (q) => ({
        answer: { decision: 'allow' },
        proof: await signAnswer(owner.authenticator, q, { decision: 'deny' }),
      }),
      'proof',
    ],
    [
      'a signature for another question',
      async (q, other) => ({
        answer: { decision: 'allow' },
        proof: await signAnswer(
          owner.authenticator,
          q,
          { decision: 'allow' },
          { over: { question: other } },
        ),
      }),
      'proof',
    ],
    [
      'a message added after signing',
      async (q) => ({
        answer: { decision: 'deny', message: 'fine, go' },
        proof: await signAnswer(owner.authenticator, q, { decision: 'deny' }),
      }),
      'proof',
    ],
    [
      'no user verification',
      async (q) => ({
        answer: { decision: 'allow' },
        proof: await signAnswer(
          owner.authenticator,
          q,
          { decision: 'allow' },
          { tamper: { uv: false } },
        ),
      }),
      'proof',
    ],
    [
      'another origin',
      async (q) => ({
        answer: { decision: 'allow' },
        proof: await signAnswer(
          owner.authenticator,
          q,
          { decision: 'allow' },
          {
            tamper: { origin: 'https://evil.example' },
          },
        ),
      }),
      'proof',
    ],
    [
      'a signing time far from now',
      async (q) => ({
        answer: { decision: 'allow' },
        proof: await signAnswer(
          owner.authenticator,
          q,
          { decision: 'allow' },
          {
            answeredAt: Date.now() - 3600_000,
          },
        ),
      }),
      'proof.answered_at',
    ],
  ]
  for (const [name, build, field] of refusals) {
    test(`refused, nothing written: ${name}`, async () => {
      const q = await ask()
      const other = await ask()
      const r = await answer(q.id, await build(q, other))
      expect([r.status, r.body.field]).toEqual([400, field])
      const read = await agentRead(q.id)
      expect(read.message.ask.status).toBe('open')
      expect(await s.ctx.store.audit.page(0, 10)).toHaveLength(0)
    })
  }

  test("someone else's passkey cannot sign this person's answer", async () => {
    const stranger = s.authenticator()
    const invite = await s.invite(owner.user.id, 'b@example.com')
    expect((await s.signUp(stranger, { email: 'b@example.com', invite })).status).toBe(200)
    const q = await ask()
    const proof = await signAnswer(stranger, q, { decision: 'allow' })
    const r = await answer(q.id, { answer: { decision: 'allow' }, proof })
    expect([r.status, r.body.field]).toEqual([400, 'proof.credential_id'])
  })

  test('a person token (a script) may answer, but never with a proof', async () => {
    const token = (await addPersonToken(s.ctx, { email: 'owner@example.com', label: 'script' }))
      .token
    const q = await ask()
    const proof = await signAnswer(owner.authenticator, q, { decision: 'allow' })
    const withProof = await s.request('POST', `/v1/app/messages/${q.id}/answer`, {
      token,
      json: { answer: { decision: 'allow' }, proof },
    })
    expect(withProof.status).toBe(403)
    const plain = await s.request('POST', `/v1/app/messages/${q.id}/answer`, {
      token,
      json: { answer: { decision: 'allow' } },
    })
    expect(plain.status).toBe(200)
    expect((await agentRead(q.id)).message.ask.proof).toBeUndefined()
  })

  test('a question with no request hash takes no proof', async () => {
    const q = await ask([{ type: 'confirm', id: 'c', label: 'Go' }])
    const proof = await signAnswer(
      owner.authenticator,
      { ...q, ask: { status: 'open', request_hash: 'x' } },
      true,
    )
    const r = await answer(q.id, { answer: true, proof })
    expect([r.status, r.body.field]).toEqual([400, 'proof'])
  })
})

describe('GET /v1/channel: the keys an agent pins', () => {
  test("the person's passkeys as JWKs with the rp id and origin; a signature verifies with them", async () => {
    const r = await s.request('GET', '/v1/channel', { token: agentToken })
    const approvers = r.body.approvers
    expect(approvers.rp_id).toBe(RP_ID)
    expect(approvers.origin).toBe(ORIGIN)
    expect(approvers.keys).toHaveLength(1)
    const key = approvers.keys[0]
    expect(key).toMatchObject({
      id: owner.authenticator.id,
      alg: -7,
      jwk: { kty: 'EC', crv: 'P-256' },
    })

    const q = await ask()
    const proof = await signAnswer(owner.authenticator, q, { decision: 'allow' })
    const data = Buffer.concat([
      base64url.decode(proof.authenticator_data),
      createHash('sha256').update(base64url.decode(proof.client_data_json)).digest(),
    ])
    const publicKey = createPublicKey({ key: key.jwk, format: 'jwk' })
    expect(verify('sha256', data, publicKey, base64url.decode(proof.signature))).toBe(true)
  })
})

describe('the audit log', () => {
  test('every decision on an approval, chained; signed ones name the passkey', async () => {
    const a = await ask()
    const b = await ask()
    const c = await ask()
    const signed = { decision: 'allow' }
    await answer(a.id, { answer: signed, proof: await signAnswer(owner.authenticator, a, signed) })
    await answer(b.id, { answer: { decision: 'deny', message: 'no' } })
    await s.request('POST', `/v1/messages/${c.id}/cancel`, {
      token: agentToken,
      json: { reason: 'answered in the terminal' },
    })
    await ask([{ type: 'confirm', id: 'x', label: 'not an approval' }])

    const rows = await s.ctx.store.audit.page(0, 10)
    expect(rows.map((r) => [r.message_id, JSON.parse(r.entry).by])).toEqual([
      [a.id, 'passkey'],
      [b.id, 'session'],
      [c.id, 'agent'],
    ])
    let prev = GENESIS_HASH
    for (const row of rows) {
      expect(row.prev_hash).toBe(prev)
      expect(row.hash).toBe(chainHash(prev, row.entry))
      prev = row.hash
    }
    const first = JSON.parse(rows[0]?.entry as string)
    expect(first).toMatchObject({
      channel_id: channelId,
      user_id: owner.user.id,
      tool: 'Bash',
      request_hash: a.ask?.request_hash,
      status: 'answered',
      answer: signed,
      credential_id: owner.authenticator.id,
    })
  })
})

describe('GET /v1/app/channels/:id/approvals', () => {
  test("the channel's decisions, newest first, paged by seq; only the person's own", async () => {
    const a = await ask()
    const b = await ask()
    await answer(a.id, {
      answer: { decision: 'allow' },
      proof: await signAnswer(owner.authenticator, a, { decision: 'allow' }),
    })
    await answer(b.id, { answer: { decision: 'deny' } })
    const r = await s.request('GET', `/v1/app/channels/${channelId}/approvals`, {
      cookie: owner.cookie,
    })
    expect(r.status).toBe(200)
    expect(
      r.body.approvals.map((e: { message_id: string; by: string }) => [e.message_id, e.by]),
    ).toEqual([
      [b.id, 'session'],
      [a.id, 'passkey'],
    ])
    // What the action was, read from the message: the line the app shows for it.
    expect(r.body.approvals[0].summary).toBe('make deploy')
    const older = await s.request(
      'GET',
      `/v1/app/channels/${channelId}/approvals?before=${r.body.approvals[0].seq}&limit=5`,
      { cookie: owner.cookie },
    )
    expect(older.body.approvals.map((e: { message_id: string }) => e.message_id)).toEqual([a.id])
    const bad = await s.request('GET', `/v1/app/channels/${channelId}/approvals?limit=1000`, {
      cookie: owner.cookie,
    })
    expect([bad.status, bad.body.field]).toEqual([400, 'limit'])
    const gone = await s.request('GET', '/v1/app/channels/ch_nope/approvals', {
      cookie: owner.cookie,
    })
    expect(gone.status).toBe(404)
  })
})
