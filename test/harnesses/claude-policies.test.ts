import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { addChannel } from '../../src/people/service.ts'
import { type PolicyClaim, type PolicyRule, policyText } from '../../src/shared/policy.ts'
import type { AnswerProof } from '../../src/shared/proof.ts'
import { ORIGIN } from '../passkeys/fixture.ts'
import {
  addPolicy,
  allowPrefix,
  forgedPolicies,
  revocation,
  signPolicy,
} from '../policies/fixture.ts'
import { type AnthropicStub, startAnthropicStub } from './anthropic-stub.ts'
import { type ClaudeSandbox, runClaude } from './claude-code.ts'
import { bashTurn, HARK } from './hark-claude.ts'
import {
  answer,
  channel,
  claudeWithHooks,
  hookEnv,
  nextQuestion,
  openAskIds,
  type Relay,
  type SignedHark,
  startProxy,
  startSignedHark,
} from './signed.ts'

/**
 * Approval policies with the real `claude -p` (offline against the model stub), the hooks as
 * `hark install claude` wrote them and the owner's passkey pinned: a rule the person signed
 * decides the next matching command in the hook, with no question and one quiet line in the
 * thread; a destructive command still asks; a deny rule denies with its message; a revoked
 * rule asks again; a forged, widened, replayed or expired one (served through a proxy that
 * plays a malicious server) changes nothing.
 */

let h: SignedHark
let box: ClaudeSandbox
const stubs: AnthropicStub[] = []
const proxies: Relay[] = []

beforeEach(async () => {
  h = await startSignedHark()
  box = await claudeWithHooks(h)
})
afterEach(async () => {
  for (const p of proxies.splice(0)) p.stop()
  for (const stub of stubs.splice(0)) stub.stop()
  box.cleanup()
  await h.close()
})

const channelId = async () =>
  (await h.s.request('GET', '/v1/channel', { token: h.env.HARK_TOKEN })).body.channel.id as string

/** The person signs `rule` in the app and adds it. */
const addRule = (rule: PolicyRule, more: Partial<PolicyClaim> = {}) => addPolicy(h, rule, more)

async function revoke(id: string) {
  const rev = revocation(id)
  const r = await h.s.request('POST', `/v1/app/policies/${id}/revoke`, {
    cookie: h.owner.cookie,
    json: { claim: rev, proof: await signPolicy(h.owner.authenticator, rev, { rpId: h.s.rpId }) },
  })
  expect(r.status).toBe(200)
}

function startClaude(command: string, url = h.env.HARK_URL) {
  const stub = startAnthropicStub([bashTurn(command), { text: 'finished' }])
  stubs.push(stub)
  const debugFile = join(box.root, `claude-debug-${stubs.length}.log`)
  const running = runClaude({
    cwd: box.work,
    home: box.home,
    baseUrl: stub.baseUrl,
    args: ['-p', 'do it', '--debug-file', debugFile],
    env: hookEnv(h, url),
    timeoutMs: 45_000,
  })
  return { stub, running, debugFile }
}

async function finished(running: ReturnType<typeof startClaude>['running']) {
  const run = await running
  if (run.timedOut || run.exitCode !== 0) throw new Error(`claude failed: ${JSON.stringify(run)}`)
  expect(run.stdout.trim()).toBe('finished')
}

/** Runs `command` with no question on the server at all (decided in the hook). */
async function runUnasked(command: string, url?: string) {
  const before = new Set((await channel(h)).map((m) => m.id))
  const run = startClaude(command, url)
  await finished(run.running)
  const questions = (await channel(h)).filter((m) => m.ask !== undefined && !before.has(m.id))
  expect(questions).toEqual([])
  return run
}

/** Runs `command`, sees it asked, and the person denies it (signed), so the run ends. */
async function runAsked(command: string, url?: string) {
  const before = await openAskIds(h)
  const run = startClaude(command, url)
  const question = await nextQuestion(h, before, run.running)
  await answer(h, question, { decision: 'deny', message: 'asked, denied' }, 'signed')
  await finished(run.running)
  expect(run.stub.toolResult(0)?.isError).toBe(true)
  return { ...run, question }
}

const made = (name: string) => existsSync(join(box.work, name))
const quietLines = async () =>
  (await channel(h)).filter((m) => m.body.text?.startsWith('Allowed by rule'))

describe(`real claude -p with approval policies (${HARK.kind})`, () => {
  test('a signed allow rule: the next matching command runs with no question and one quiet line', async () => {
    const id = await channelId()
    await addRule(allowPrefix(id, 'touch'))
    const { stub } = await runUnasked('touch ruled-file')
    expect(made('ruled-file')).toBe(true)
    expect(stub.toolResult(0)?.isError).toBe(false)
    const lines = await quietLines()
    expect(lines).toHaveLength(1)
    expect(lines[0]?.silent).toBe(true)
    expect(lines[0]?.body.text).toBe(
      'Allowed by rule “Allow Bash commands starting `touch` for this agent”: touch ruled-file',
    )
    const mine = await h.s.request('GET', '/v1/app/policies', { cookie: h.owner.cookie })
    expect(mine.body.policies[0]).toMatchObject({ uses: 1 })
  }, 60_000)

  test('a destructive command still asks, whatever allow rule covers its prefix', async () => {
    const id = await channelId()
    await addRule(allowPrefix(id, 'rm'))
    await runAsked('rm -rf some-dir')
    expect(await quietLines()).toEqual([])
  }, 60_000)

  test("a deny rule denies at once with the person's message", async () => {
    const id = await channelId()
    await addRule({
      ...allowPrefix(id, 'touch'),
      effect: 'deny',
      message: 'No new files here, use the scratch dir',
    })
    const { stub } = await runUnasked('touch denied-file')
    expect(made('denied-file')).toBe(false)
    const result = stub.toolResult(0)
    expect(result?.isError).toBe(true)
    expect(result?.content).toContain('No new files here, use the scratch dir')
  }, 60_000)

  test('revoking makes the next one ask again, and a server that hides the revocation later changes nothing', async () => {
    const id = await channelId()
    const { claim, proof } = await addRule(allowPrefix(id, 'touch'))
    await runUnasked('touch first-file')
    expect(made('first-file')).toBe(true)
    await revoke(claim.id)
    await runAsked('touch second-file')
    expect(made('second-file')).toBe(false)
    // The server hands the policy back without its revocation: the hook remembers.
    const proxy = startProxy(h.env.HARK_URL, (body) => {
      if (!Array.isArray(body?.policies)) return false
      body.policies = [{ id: claim.id, claim: policyText(claim), proof }]
      return true
    })
    proxies.push(proxy)
    await runAsked('touch third-file', proxy.url)
    expect(made('third-file')).toBe(false)
  }, 120_000)

  test('forged, widened, expired, moved, unsigned, replayed or signed by an unpinned key: ignored with a warning, the person asked', async () => {
    const id = await channelId()
    // Real signed rules the server then tampers with.
    const narrow = await addRule(allowPrefix(id, 'touch never-this'))
    const otherChannel = (await addChannel(h.s.ctx, { email: 'owner@example.com', label: 'B' }))
      .channel.id
    const moved = await addRule(allowPrefix(otherChannel, 'touch'))
    // A real signature of the person's (their answer to an earlier card), replayed as a rule's.
    const { question } = await runAsked('touch earlier-file')
    const { served: forged, reasons } = await forgedPolicies({
      authenticator: h.owner.authenticator,
      rpId: h.s.rpId,
      origin: ORIGIN,
      channelId: id,
      command: 'touch',
      narrow,
      moved,
      answerProof: (await channel(h)).find((m) => m.id === question.id)?.ask?.proof as AnswerProof,
    })
    const proxy = startProxy(h.env.HARK_URL, (body) => {
      if (!Array.isArray(body?.policies)) return false
      body.policies = forged
      return true
    })
    proxies.push(proxy)
    const { debugFile } = await runAsked('touch forged-file', proxy.url)
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(made('forged-file')).toBe(false)
    expect(await quietLines()).toEqual([])
    // The hook's stderr, as Claude Code logged it (escaped in one JSON string).
    const log = readFileSync(debugFile, 'utf8')
      .split('\\n')
      .filter((line) => line.startsWith('hark hook:'))
      .map((line) => line.split('"')[0])
    for (const [p, why] of reasons) {
      expect(log).toContain(`hark hook: policy ${p} ignored: ${why}`)
    }
  }, 60_000)
})
