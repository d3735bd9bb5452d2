import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { signBatch } from '../asks/signing.ts'
import { type AnthropicStub, startAnthropicStub } from './anthropic-stub.ts'
import { type ClaudeSandbox, runClaude } from './claude-code.ts'
import { type CodexSandbox, escalatedWrite, makeCodexSandbox, writeCodexConfig } from './codex.ts'
import { bashTurn, HARK } from './hark-claude.ts'
import { execCodex, reviewerRequests, runHark as runHarkCodex } from './hark-codex.ts'
import { callId, type OpenAIStub, startOpenAIStub } from './openai-stub.ts'
import {
  claudeWithHooks,
  hookEnv,
  openAskIds,
  type Relay,
  type SignedHark,
  startProxy,
  startSignedHark,
  warnings,
} from './signed.ts'

/**
 * Batch answers with the real agents (issue 29 item 5): two `claude -p` runs of one agent
 * (one channel, one Hark profile) and one `codex exec --approve-for-me` of another (its own
 * channel and profile), all offline against the model stubs, with the hooks exactly as
 * `hark install` wrote them (no --allow-unsigned). Three approvals wait; the person allows
 * them together with one passkey assertion over the list of their claims
 * (POST /v1/app/answers), and each hook checks its own item against its own pinned keys
 * before its command runs. A server that drops one agent's item from the list gets nothing
 * run for that agent.
 */
let h: SignedHark
let claudeBox: ClaudeSandbox
let codexBox: CodexSandbox
let codexEnv: { HARK_URL: string; HARK_TOKEN: string }
let model: OpenAIStub
const stubs: AnthropicStub[] = []
const proxies: Relay[] = []

beforeEach(async () => {
  h = await startSignedHark()
  claudeBox = await claudeWithHooks(h)
  // The second agent: its own channel, machine and pinned keys.
  const made = await addChannel(h.s.ctx, { email: 'owner@example.com', label: 'Codex' })
  codexEnv = { HARK_URL: h.env.HARK_URL, HARK_TOKEN: made.token }
  codexBox = makeCodexSandbox()
  model = startOpenAIStub([escalatedWrite, { type: 'text', text: 'finished' }])
  writeCodexConfig(codexBox.codexHome, model.baseUrl)
  const codex = await runHarkCodex(codexBox, ['install', 'codex'], codexEnv)
  expect([codex.code, codex.stderr]).toEqual([0, ''])
  const pinned = await runHarkCodex(codexBox, ['keys', 'refresh'], codexEnv)
  expect([pinned.code, pinned.stdout]).toEqual([0, expect.stringContaining('pinned on first use')])
})
afterEach(async () => {
  for (const p of proxies.splice(0)) p.stop()
  for (const stub of stubs.splice(0)) stub.stop()
  model.stop()
  claudeBox.cleanup()
  codexBox.cleanup()
  await h.close()
})

const made = (name: string) => existsSync(join(claudeBox.work, name))
const written = () => existsSync(join(codexBox.work, 'out.txt'))

/** `claude -p` on the model's one Bash call, touching `name`; bounded. */
function startClaude(name: string, url = h.env.HARK_URL) {
  const stub = startAnthropicStub([
    bashTurn(`touch ${name} && echo ran-${name}`),
    { text: 'finished' },
  ])
  stubs.push(stub)
  const debugFile = join(claudeBox.root, `claude-debug-${name}.log`)
  const running = runClaude({
    cwd: claudeBox.work,
    home: claudeBox.home,
    baseUrl: stub.baseUrl,
    args: ['-p', 'do it', '--debug-file', debugFile],
    env: hookEnv(h, url),
    timeoutMs: 60_000,
  })
  return { stub, running, debugFile }
}

/** Waits until `n` approvals not in `before` are open, as the app's list shows them. */
async function waiting(before: Set<string>, n: number, runs: Promise<unknown>[]) {
  let ended = false
  void Promise.race(runs).then(() => {
    ended = true
  })
  const deadline = Date.now() + 45_000
  while (!ended && Date.now() < deadline) {
    const open = (await h.s.request('GET', '/v1/app/asks', { cookie: h.owner.cookie })).body
      .asks as Message[]
    const fresh = open.filter((m) => !before.has(m.id))
    if (fresh.length >= n) return fresh
    await Bun.sleep(25)
  }
  throw new Error(`${n} approvals did not open (a run ended: ${ended})`)
}

/** The person selects the approvals and allows them with one passkey gesture, as the app does. */
async function allowTogether(questions: Message[]) {
  const allow = { decision: 'allow' }
  const items = questions.map((question) => ({ question, answer: allow }))
  const { proof } = await signBatch(h.owner.authenticator, items, { rpId: h.s.rpId })
  const r = await h.s.request('POST', '/v1/app/answers', {
    cookie: h.owner.cookie,
    json: { items: questions.map((q) => ({ id: q.id, answer: allow })), proof },
  })
  expect(r.status).toBe(200)
  return r.body.answers as { message: Message }[]
}

async function claudeFinished(run: ReturnType<typeof startClaude>) {
  const ran = await run.running
  if (ran.timedOut || ran.exitCode !== 0) throw new Error(`claude failed: ${JSON.stringify(ran)}`)
  expect(ran.stdout.trim()).toBe('finished')
}

async function codexFinished(running: ReturnType<typeof execCodex>) {
  const ran = await running
  if (ran.timedOut || ran.exitCode !== 0) throw new Error(`codex failed: ${JSON.stringify(ran)}`)
  // Never handed to Codex's own model reviewer: the hook decided.
  expect(reviewerRequests(model)).toEqual([])
}

describe(`batch answers with the real agents (${HARK.kind})`, () => {
  test('three approvals of two agents allowed with one gesture: each hook verifies its own', async () => {
    const before = await openAskIds(h)
    const first = startClaude('one')
    const second = startClaude('two')
    const codex = execCodex(codexBox, 'write the file', codexEnv)
    const questions = await waiting(before, 3, [first.running, second.running, codex])
    // Nothing ran before the answer.
    expect([made('one'), made('two'), written()]).toEqual([false, false, false])
    const channels = new Set(questions.map((q) => q.channel_id))
    expect(channels.size).toBe(2)
    const answers = await allowTogether(questions)
    const lists = answers.map((a) => a.message.ask?.proof?.batch?.items)
    expect(lists.every((l) => l?.length === 3 && l.join() === lists[0]?.join())).toBe(true)
    await Promise.all([claudeFinished(first), claudeFinished(second), codexFinished(codex)])
    expect([made('one'), made('two'), written()]).toEqual([true, true, true])
    expect(first.stub.toolResult(0)).toEqual({ content: 'ran-one', isError: false })
    expect(second.stub.toolResult(0)).toEqual({ content: 'ran-two', isError: false })
    expect(model.toolOutput(callId(0)) ?? '').toContain('wrote')
    for (const run of [first, second]) {
      expect(readFileSync(run.debugFile, 'utf8')).not.toContain('not trusted')
    }
    expect(await warnings(h)).toEqual([])
  }, 120_000)

  test("a server that drops one agent's item from the signed list: that command does not run", async () => {
    // Between Claude Code's hook and Hark, a proxy hands the hook its allow with its own item
    // taken out of the list (the signature and every other item kept).
    const proxy = startProxy(h.env.HARK_URL, (body) => {
      const ask = body?.message?.ask
      const items = ask?.proof?.batch?.items
      if (ask?.status !== 'answered' || !Array.isArray(items)) return false
      items.splice(0, 1)
      return true
    })
    proxies.push(proxy)
    const before = await openAskIds(h)
    const fooled = startClaude('one', proxy.url)
    const codex = execCodex(codexBox, 'write the file', codexEnv)
    const questions = await waiting(before, 2, [fooled.running, codex])
    // Claude Code's item first, so the proxy drops exactly that one.
    const claudeFirst = [
      questions.find((q) => JSON.stringify(q.body).includes('touch one')),
      questions.find((q) => !JSON.stringify(q.body).includes('touch one')),
    ] as Message[]
    await allowTogether(claudeFirst)
    await Promise.all([claudeFinished(fooled), codexFinished(codex)])
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(made('one')).toBe(false)
    expect(fooled.stub.toolResult(0)?.isError).toBe(true)
    expect(readFileSync(fooled.debugFile, 'utf8')).toContain(
      'the allow is not trusted (this answer to this question is not in the signed batch)',
    )
    // The other agent's item of the same batch stands.
    expect(written()).toBe(true)
  }, 120_000)
})
