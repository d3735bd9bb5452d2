import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { addChannel, addPersonToken } from '../../src/people/service.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'
import { allowPrefix, claimOf, revocation, signPolicy } from './fixture.ts'

/**
 * The policy routes: the person adds a policy their passkey signed (`POST /v1/app/policies`),
 * lists (`GET /v1/app/policies`) and revokes it with a signed revocation; the agent reads those
 * naming its channel (`GET /v1/policies`) and reports a use (`POST /v1/policies/:id/uses`),
 * which leaves one silent line in the thread. The server checks what it can and stores nothing
 * on bad input; the agent checks again (test/trust/policies.test.ts).
 */
let s: FreshServer
let owner: Awaited<ReturnType<FreshServer['setUpOwner']>>
let channel: { id: string; token: string }
let other: { id: string; token: string }

beforeEach(async () => {
  s = await startFreshServer()
  s.clock.now = () => Date.now()
  owner = await s.setUpOwner()
  const a = await addChannel(s.ctx, { email: 'owner@example.com', label: 'A' })
  const b = await addChannel(s.ctx, { email: 'owner@example.com', label: 'B' })
  channel = { id: a.channel.id, token: a.token }
  other = { id: b.channel.id, token: b.token }
})
afterEach(() => s.close())

const post = (json: unknown) =>
  s.request('POST', '/v1/app/policies', { cookie: owner.cookie, json })
const agentPolicies = async (token: string) =>
  (await s.request('GET', '/v1/policies', { token })).body.policies as { id: string }[]

describe('POST /v1/app/policies', () => {
  test('a signed policy is stored with its claim byte for byte and handed to its channel only', async () => {
    const claim = claimOf(allowPrefix(channel.id, 'npm test'))
    const proof = await signPolicy(owner.authenticator, claim)
    const r = await post({ claim, proof })
    expect(r.status).toBe(200)
    expect(r.body.policy).toMatchObject({ id: claim.id, channel_id: channel.id, uses: 0 })
    expect(JSON.parse(r.body.policy.claim)).toEqual(claim)
    expect((await agentPolicies(channel.token)).map((p) => p.id)).toEqual([claim.id])
    expect(await agentPolicies(other.token)).toEqual([])
    const mine = await s.request('GET', '/v1/app/policies', { cookie: owner.cookie })
    expect(mine.body.policies.map((p: { id: string }) => p.id)).toEqual([claim.id])
  })

  test('a rule for all my agents is handed to every channel of the person', async () => {
    const claim = claimOf({ ...allowPrefix(channel.id, 'ls'), where: { kind: 'all' } })
    expect(
      (await post({ claim, proof: await signPolicy(owner.authenticator, claim) })).status,
    ).toBe(200)
    expect((await agentPolicies(channel.token)).map((p) => p.id)).toEqual([claim.id])
    expect((await agentPolicies(other.token)).map((p) => p.id)).toEqual([claim.id])
  })

  test('refused, naming the field, and nothing stored: too long, unsigned, signed over another rule, another channel, a token', async () => {
    const rule = allowPrefix(channel.id, 'npm test')
    const long = claimOf(rule)
    long.expires_at = long.created_at + 31 * 24 * 3600_000
    const r1 = await post({ claim: long, proof: await signPolicy(owner.authenticator, long) })
    expect([r1.status, r1.body.field]).toEqual([400, 'claim.expires_at'])

    const claim = claimOf(rule)
    const r2 = await post({ claim })
    expect([r2.status, r2.body.field]).toEqual([400, 'proof'])

    const signed = await signPolicy(owner.authenticator, claim)
    const widened = { ...claim, rule: allowPrefix(channel.id, 'npm') }
    const r3 = await post({ claim: widened, proof: signed })
    expect([r3.status, r3.body.field]).toEqual([400, 'proof'])

    const foreign = claimOf(allowPrefix('chn_not_mine', 'ls'))
    const r4 = await post({ claim: foreign, proof: await signPolicy(owner.authenticator, foreign) })
    expect([r4.status, r4.body.field]).toEqual([400, 'claim.rule.where.channel_id'])

    // A person token (a script) cannot sign, and may not add one even with a valid proof.
    const { token } = await addPersonToken(s.ctx, { email: 'owner@example.com' })
    const fine = claimOf(rule)
    const r5 = await s.request('POST', '/v1/app/policies', {
      token,
      json: { claim: fine, proof: await signPolicy(owner.authenticator, fine) },
    })
    expect(r5.status).toBe(403)
    expect(await agentPolicies(channel.token)).toEqual([])
  })

  test('the same policy twice is 409', async () => {
    const claim = claimOf(allowPrefix(channel.id, 'npm test'))
    expect(
      (await post({ claim, proof: await signPolicy(owner.authenticator, claim) })).status,
    ).toBe(200)
    const again = await post({ claim, proof: await signPolicy(owner.authenticator, claim) })
    expect(again.status).toBe(409)
  })
})

describe('revoking and using', () => {
  test('a signed revocation is kept and handed to the agent with the policy; an unsigned one is refused', async () => {
    const claim = claimOf(allowPrefix(channel.id, 'npm test'))
    await post({ claim, proof: await signPolicy(owner.authenticator, claim) })
    const path = `/v1/app/policies/${claim.id}/revoke`
    const unsigned = await s.request('POST', path, {
      cookie: owner.cookie,
      json: { claim: revocation(claim.id) },
    })
    expect([unsigned.status, unsigned.body.field]).toEqual([400, 'proof'])
    const rev = revocation(claim.id)
    const r = await s.request('POST', path, {
      cookie: owner.cookie,
      json: { claim: rev, proof: await signPolicy(owner.authenticator, rev) },
    })
    expect(r.status).toBe(200)
    expect(r.body.policy.revoked_at).toBe(rev.revoked_at)
    const [served] = (await s.request('GET', '/v1/policies', { token: channel.token })).body
      .policies
    expect(JSON.parse(served.revocation.claim)).toEqual(rev)
  })

  test('a use is counted and leaves one silent line in the thread, not pushed', async () => {
    const claim = claimOf(allowPrefix(channel.id, 'npm test'))
    await post({ claim, proof: await signPolicy(owner.authenticator, claim) })
    const r = await s.request('POST', `/v1/policies/${claim.id}/uses`, {
      token: channel.token,
      json: { summary: 'npm test -- --watch' },
    })
    expect(r.status).toBe(200)
    expect(r.body.policy.uses).toBe(1)
    const { messages } = (
      await s.request('GET', '/v1/messages?since=0&peek=1', { token: channel.token })
    ).body
    expect(messages.map((m: { body: { text: string }; silent?: boolean }) => m.body.text)).toEqual([
      'Allowed by rule “Allow Bash commands starting `npm test` for this agent”: npm test -- --watch',
    ])
    // Another agent cannot report a use of this channel's policy.
    const foreign = await s.request('POST', `/v1/policies/${claim.id}/uses`, {
      token: other.token,
      json: { summary: 'x' },
    })
    expect(foreign.status).toBe(404)
  })
})
