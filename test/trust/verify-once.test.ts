import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import {
  askLedger,
  type Pinned,
  pin,
  pinnedApprovers,
  requestHash,
  verifyAnswer,
} from '../../src/agent/trust.ts'
import type { Block, Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { signAnswer } from '../asks/signing.ts'
import { tempDir } from '../harness.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/**
 * `verifyAnswer` (src/agent/trust.ts): a signed answer the agent acted on acts once. A server
 * that hands the same question's record back as the answer to a later question for the same
 * action (same request hash, a proof still within its time window) is refused, even with a
 * passkey that keeps no signature counter (synced passkeys report 0).
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator }
let agentToken: string
let env: Record<string, string>

const input = { command: 'make deploy', description: 'Deploy' }
const block: Block = { type: 'approval', id: 'a', tool: 'Bash', input, scopes: ['once'] }
const allow = { decision: 'allow' }

beforeEach(async () => {
  s = await startFreshServer()
  owner = await s.setUpOwner()
  agentToken = (await addChannel(s.ctx, { email: 'owner@example.com', label: 'CI' })).token
  const r = await s.request('GET', '/v1/channel', { token: agentToken })
  env = { HOME: tempDir('hark-home-') }
  pin(env, 'default', { ...r.body.approvers, channel_id: r.body.channel.id })
})
afterEach(() => {
  s.close()
  rmSync(env.HOME as string, { recursive: true, force: true })
})

/** A question for the action, answered allow and signed by a passkey with no counter. */
async function answered(): Promise<{ q: Message; askedAt: number }> {
  const askedAt = Date.now()
  const r = await s.request('POST', '/v1/messages', {
    token: agentToken,
    json: { body: { blocks: [block] } },
  })
  const sent = r.body.message as Message
  const proof = await signAnswer(owner.authenticator, sent, allow, { tamper: { counter: 0 } })
  const q = { ...sent, ask: { ...sent.ask, status: 'answered', answer: allow, proof } }
  return { q: q as Message, askedAt }
}

const verify = (q: Message, askedAt: number) =>
  verifyAnswer(env, 'default', q, {
    request_hash: requestHash('Bash', input),
    answer: allow,
    approval: true,
    asked_at: askedAt,
  })

describe('verifyAnswer: a signed answer acts once', () => {
  test('the same question handed back again is refused; a new question still passes', async () => {
    const first = await answered()
    expect(verify(first.q, first.askedAt)).toMatchObject({ ok: true, counter: 0 })
    // A later question for the same action; the server answers it with the first one's record.
    const later = Date.now()
    expect(verify(first.q, later)).toEqual({
      ok: false,
      reason: 'this signed answer was already acted on (a replay)',
    })
    const second = await answered()
    expect(verify(second.q, second.askedAt)).toMatchObject({ ok: true })
    expect(Object.keys(pinnedApprovers(env, 'default')?.used ?? {})).toEqual([
      first.q.id,
      second.q.id,
    ])
  })

  test('a refused proof is not remembered; old entries are dropped', async () => {
    const pinned = pinnedApprovers(env, 'default') as Pinned
    pin(env, 'default', { ...pinned, used: { msg_old: Date.now() - 2 * 24 * 3600_000 } })
    const { q, askedAt } = await answered()
    const wrong = verifyAnswer(env, 'default', q, {
      request_hash: requestHash('Bash', { command: 'rm -rf /' }),
      answer: allow,
      approval: true,
      asked_at: askedAt,
    })
    expect(wrong.ok).toBe(false)
    expect(pinnedApprovers(env, 'default')?.used).toEqual({ msg_old: expect.any(Number) })
    expect(verify(q, askedAt).ok).toBe(true)
    expect(Object.keys(pinnedApprovers(env, 'default')?.used ?? {})).toEqual([q.id])
  })
})

describe('askLedger: only answers to questions this process asked, under ids never seen before', () => {
  const expected = (askedAt: number) => ({
    request_hash: requestHash('Bash', input),
    answer: allow,
    approval: true,
    asked_at: askedAt,
  })

  test('an earlier question whose allow the server held back, handed out again as new, is refused', async () => {
    const earlier = await answered()
    askLedger(env, 'default').note(earlier.q.id) // the earlier hook asked it, then gave up
    // A new hook asks for the same action; the server gives it the earlier question's id.
    const ledger = askLedger(env, 'default')
    ledger.note(earlier.q.id)
    expect(ledger.verify(earlier.q, expected(Date.now()))).toEqual({
      ok: false,
      reason: 'the server reused the id of an earlier question (a replay)',
    })
  })

  test('an answer to a question this process did not ask is refused; its own passes', async () => {
    const mine = await answered()
    const other = await answered()
    const ledger = askLedger(env, 'default')
    ledger.note(mine.q.id)
    expect(ledger.verify(other.q, expected(other.askedAt))).toEqual({
      ok: false,
      reason: 'the answer is for a question this agent did not ask',
    })
    expect(ledger.verify(mine.q, expected(mine.askedAt))).toMatchObject({ ok: true })
  })
})

describe('an allow written straight into the database', () => {
  test('reads as answered through the API, and the agent refuses it: no proof', async () => {
    const ledger = askLedger(env, 'default')
    const askedAt = Date.now()
    const r = await s.request('POST', '/v1/messages', {
      token: agentToken,
      json: { body: { blocks: [block] } },
    })
    const id = (r.body.message as Message).id
    ledger.note(id)
    s.ctx.db.run(
      "UPDATE messages SET ask_status = 'answered', answer = ?1, ask_answered_at = ?2 WHERE id = ?3",
      [JSON.stringify(allow), Date.now(), id],
    )
    const read = await s.request('GET', `/v1/asks/${id}`, { token: agentToken })
    expect(read.body.answer).toEqual(allow)
    expect(
      ledger.verify(read.body.message, {
        request_hash: requestHash('Bash', input),
        answer: allow,
        approval: true,
        asked_at: askedAt,
      }),
    ).toEqual({ ok: false, reason: 'the answer is not signed' })
  })
})
