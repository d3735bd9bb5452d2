import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import {
  type PolicyClaim,
  type PolicyRule,
  policyText,
  proposedMatch,
} from '../../src/shared/policy.ts'
import { claimOf, signPolicy } from '../policies/fixture.ts'
import { type CodexSandbox, makeCodexSandbox, writeCodexConfig } from './codex.ts'
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
 * question: the rule made from the first card decides the next identical command in the hook.
 */

let h: SignedHark
let box: CodexSandbox
const models: OpenAIStub[] = []
const proxies: Relay[] = []

const escalatedWrite = {
  type: 'exec',
  cmd: 'echo hello > out.txt && echo wrote',
  justification: 'Write out.txt?',
  sandboxPermissions: 'require_escalated',
} as const
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

/** One bounded `codex exec` of the model's one escalated command. */
async function run(url?: string) {
  const model = startOpenAIStub([escalatedWrite, { type: 'text', text: 'finished' }])
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
  const claim = claimOf(rule)
  const proof = await signPolicy(h.owner.authenticator, claim, { rpId: h.s.rpId })
  const r = await h.s.request('POST', '/v1/app/policies', {
    cookie: h.owner.cookie,
    json: { claim, proof },
  })
  expect(r.status).toBe(200)
  return { claim, proof }
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
