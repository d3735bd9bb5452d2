import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import {
  type PolicyClaim,
  type PolicyRule,
  policyText,
  proposedMatch,
} from '../../src/shared/policy.ts'
import { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { ORIGIN } from '../passkeys/fixture.ts'
import { addPolicy, allowPrefix, claimOf, revocation, signPolicy } from '../policies/fixture.ts'
import { type CodexSandbox, escalatedWrite, makeCodexSandbox, writeCodexConfig } from './codex.ts'
import { execCodex, HARK, reviewerRequests, runHark } from './hark-codex.ts'
import { callId, type OpenAIStub, startOpenAIStub } from './openai-stub.ts'
import {
  answer,
  channel,
  hookEnv,
  nextQuestion,
  openAskIds,
  pinKeys,
  type Relay,
  type SignedHark,
  startProxy,
  startSignedHark,
} from './signed.ts'

/**
 * Approval policies with the real `codex exec --approve-for-me` (offline against the model
 * stub), the hook as `hark install codex` wrote it. Codex takes no `updatedPermissions` from a
 * hook (it fails the hook), so Hark's own signed policies are what spare the person the second
 * question: the rule made from the first card decides the next identical command in the hook; a
 * destructive command still asks; a deny rule denies with its message; revoking makes the next
 * one ask again (and a server that hides the revocation afterwards changes nothing); a forged,
 * widened, expired, moved, unpinned, unsigned or replayed rule, served through a proxy, changes
 * nothing.
 */

let h: SignedHark
let box: CodexSandbox
const models: OpenAIStub[] = []
const proxies: Relay[] = []

const written = () => existsSync(join(box.work, 'out.txt'))

beforeEach(async () => {
  h = await startSignedHark()
  box = makeCodexSandbox()
  await pinKeys(h, box)
})
afterEach(async () => {
  for (const p of proxies.splice(0)) p.stop()
  for (const m of models.splice(0)) m.stop()
  box.cleanup()
  await h.close()
})

type Step = Parameters<typeof startOpenAIStub>[0][number]

/** One bounded `codex exec` of the model's one escalated command. */
async function run(url?: string, step: Step = escalatedWrite) {
  const model = startOpenAIStub([step, { type: 'text', text: 'finished' }])
  models.push(model)
  // A fresh config.toml for this model stub, then Hark's hooks merged into it again.
  writeCodexConfig(box.codexHome, model.baseUrl)
  const install = await runHark(box, ['install', 'codex'], h.env)
  expect(install.code).toBe(0)
  return { model, running: execCodex(box, 'write the file', hookEnv(h, url)) }
}

async function finished({ model, running }: Awaited<ReturnType<typeof run>>) {
  const r = await running
  if (r.timedOut || r.exitCode !== 0) throw new Error(`codex failed: ${JSON.stringify(r)}`)
  expect(reviewerRequests(model)).toEqual([])
  return model.toolOutput(callId(0)) ?? ''
}

/** The first run asks; the person allows it (signed). Returns the card's action. */
async function firstAsked(): Promise<Message> {
  const before = await openAskIds(h)
  const first = await run()
  const question = await nextQuestion(h, before, first.running)
  await answer(h, question, { decision: 'allow' }, 'signed')
  await finished(first)
  expect(written()).toBe(true)
  rmSync(join(box.work, 'out.txt'))
  return question
}

/** The rule the card proposes for the card's action, signed and added by the person. */
async function addRuleFor(question: Message, more: Partial<PolicyRule> = {}) {
  const block = question.body.blocks?.[0] as unknown as { tool: string; input: unknown }
  const id = (await h.s.request('GET', '/v1/channel', { token: h.env.HARK_TOKEN })).body.channel
    .id as string
  const rule: PolicyRule = {
    effect: 'allow',
    tool: block.tool,
    match: proposedMatch(block.tool, block.input),
    where: { kind: 'channel', channel_id: id },
    ...more,
  }
  return await addPolicy(h, rule)
}

/** The next run is asked: the person denies it (signed). Returns the tool's output. */
async function deniedWhenAsked(url?: string, step?: Step) {
  const before = await openAskIds(h)
  const second = await run(url, step)
  const asked = await nextQuestion(h, before, second.running)
  await answer(h, asked, { decision: 'deny', message: 'asked again' }, 'signed')
  const output = await finished(second)
  expect(output).toContain('asked again')
  return output
}

const quietLines = async () =>
  (await channel(h)).filter((m) => /^(Allowed|Denied) by rule/.test(m.body.text ?? ''))

const servedAs = (policies: unknown[]) => {
  const proxy = startProxy(h.env.HARK_URL, (body) => {
    if (!Array.isArray(body?.policies)) return false
    body.policies = policies
    return true
  })
  proxies.push(proxy)
  return proxy
}

const questionsSince = async (before: Set<string>) =>
  (await channel(h)).filter((m) => m.ask !== undefined && !before.has(m.id))

describe(`real codex exec with approval policies (${HARK.kind})`, () => {
  test('the rule from the card: the next identical command runs with no question, one quiet line', async () => {
    const question = await firstAsked()
    const { claim } = await addRuleFor(question)
    // Compound (`&&`): the proposal is the exact command.
    expect(claim.rule.match.kind).toBe('exact')
    const before = new Set((await channel(h)).map((m) => m.id))
    const output = await finished(await run())
    expect(await questionsSince(before)).toEqual([])
    expect(written()).toBe(true)
    expect(output).toContain('wrote')
    const lines = (await channel(h)).filter((m) => m.body.text?.startsWith('Allowed by rule'))
    expect(lines.map((m) => m.silent)).toEqual([true])
  }, 90_000)

  test("a deny rule denies at once with the person's message", async () => {
    const question = await firstAsked()
    await addRuleFor(question, { effect: 'deny', message: 'Write to /tmp instead' })
    const before = new Set((await channel(h)).map((m) => m.id))
    const output = await finished(await run())
    expect(await questionsSince(before)).toEqual([])
    expect(written()).toBe(false)
    expect(output).toContain('Write to /tmp instead')
  }, 90_000)

  test('a destructive command still asks, whatever allow rule covers its prefix', async () => {
    const id = (await h.s.request('GET', '/v1/channel', { token: h.env.HARK_TOKEN })).body.channel
      .id as string
    // A shell rule made on Claude Code's card covers Codex's shell too: not for `rm -rf`.
    const claim = claimOf(allowPrefix(id, 'rm'))
    const proof = await signPolicy(h.owner.authenticator, claim, { rpId: h.s.rpId })
    const r = await h.s.request('POST', '/v1/app/policies', {
      cookie: h.owner.cookie,
      json: { claim, proof },
    })
    expect(r.status).toBe(200)
    mkdirSync(join(box.work, 'victim'))
    await deniedWhenAsked(undefined, {
      type: 'exec',
      cmd: 'rm -rf victim',
      justification: 'Remove victim?',
      sandboxPermissions: 'require_escalated',
    })
    expect(existsSync(join(box.work, 'victim'))).toBe(true)
    expect(await quietLines()).toEqual([])
  }, 90_000)

  test('revoking makes the next one ask again, and a server that hides the revocation later changes nothing', async () => {
    const question = await firstAsked()
    const { claim, proof } = await addRuleFor(question)
    const before = new Set((await channel(h)).map((m) => m.id))
    await finished(await run())
    expect(await questionsSince(before)).toEqual([])
    expect(written()).toBe(true)
    rmSync(join(box.work, 'out.txt'))
    const rev = revocation(claim.id)
    const r = await h.s.request('POST', `/v1/app/policies/${claim.id}/revoke`, {
      cookie: h.owner.cookie,
      json: { claim: rev, proof: await signPolicy(h.owner.authenticator, rev, { rpId: h.s.rpId }) },
    })
    expect(r.status).toBe(200)
    await deniedWhenAsked()
    expect(written()).toBe(false)
    // The server hands the rule back without its revocation: the hook remembers it.
    const proxy = servedAs([{ id: claim.id, claim: policyText(claim), proof }])
    await deniedWhenAsked(proxy.url)
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(written()).toBe(false)
    expect(await quietLines()).toHaveLength(1)
  }, 180_000)

  test('forged, expired, moved, unpinned, unsigned or replayed: ignored, the person is asked', async () => {
    const question = await firstAsked()
    const block = question.body.blocks?.[0] as unknown as { tool: string; input: unknown }
    const id = (await h.s.request('GET', '/v1/channel', { token: h.env.HARK_TOKEN })).body.channel
      .id as string
    // Each would allow the command, were it trusted.
    const rule = (channel_id = id): PolicyRule => ({
      effect: 'allow',
      tool: block.tool,
      match: proposedMatch(block.tool, block.input),
      where: { kind: 'channel', channel_id },
    })
    const other = (await addChannel(h.s.ctx, { email: 'owner@example.com', label: 'B' })).channel.id
    const moved = claimOf(rule(other))
    const movedProof = await signPolicy(h.owner.authenticator, moved, { rpId: h.s.rpId })
    const old = claimOf(rule(), {
      created_at: Date.now() - 7200_000,
      expires_at: Date.now() - 3600_000,
    })
    const oldProof = await signPolicy(h.owner.authenticator, old, { rpId: h.s.rpId })
    const stranger = new SoftwareAuthenticator(ORIGIN)
    await stranger.register({
      challenge: 'c2VydmVy',
      rp: { id: h.s.rpId, name: 'Hark' },
      user: { id: 'c2VydmVy', name: 'server', displayName: 'server' },
    })
    const strange = claimOf(rule())
    const strangeProof = await signPolicy(stranger, strange, { rpId: h.s.rpId })
    const unsigned = claimOf(rule())
    // The person's signed allow of the first card, replayed as a rule's proof.
    const cardProof = (await channel(h)).find((m) => m.id === question.id)?.ask?.proof as {
      answered_at: number
    }
    const replayed = claimOf(rule(), { created_at: cardProof.answered_at })
    const proxy = servedAs([
      { id: moved.id, claim: policyText(moved), proof: movedProof },
      { id: old.id, claim: policyText(old), proof: oldProof },
      { id: strange.id, claim: policyText(strange), proof: strangeProof },
      { id: unsigned.id, claim: policyText(unsigned), proof: null },
      { id: replayed.id, claim: policyText(replayed), proof: cardProof },
    ])
    await deniedWhenAsked(proxy.url)
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(written()).toBe(false)
    expect(await quietLines()).toEqual([])
  }, 90_000)

  test('a rule the server widened is ignored: the person is asked', async () => {
    const question = await firstAsked()
    const { claim, proof } = await addRuleFor(question)
    const widened: PolicyClaim = {
      ...claim,
      rule: { ...claim.rule, match: { kind: 'prefix', command: 'echo' } },
    }
    const proxy = startProxy(h.env.HARK_URL, (body) => {
      if (!Array.isArray(body?.policies)) return false
      body.policies = [{ id: claim.id, claim: policyText(widened), proof }]
      return true
    })
    proxies.push(proxy)
    const before = await openAskIds(h)
    const second = await run(proxy.url)
    const asked = await nextQuestion(h, before, second.running)
    await answer(h, asked, { decision: 'deny', message: 'asked again' }, 'signed')
    const output = await finished(second)
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(written()).toBe(false)
    expect(output).toContain('asked again')
  }, 90_000)
})
