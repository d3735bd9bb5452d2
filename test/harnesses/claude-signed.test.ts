import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { type AnthropicStub, startAnthropicStub } from './anthropic-stub.ts'
import { type ClaudeSandbox, runClaude, settingsPath } from './claude-code.ts'
import { bashTurn, HARK } from './hark-claude.ts'
import {
  answer,
  askRecord,
  claudeWithHooks,
  denyToAllow,
  hookEnv,
  NOT_ACTED_ON,
  nextQuestion,
  openAskIds,
  type Relay,
  recordReplayOf,
  replayOf,
  type SignedHark,
  startProxy,
  startSignedHark,
  warnings,
} from './signed.ts'

/**
 * The real `claude -p` (2.1.330, offline against the model stub) with Hark's hooks exactly as
 * `hark install claude` wrote them: no `--allow-unsigned`, no HARK_ALLOW_UNSIGNED. The sandbox's
 * Hark profile pinned the owner's passkey (`hark keys refresh`), so a command runs only after an
 * allow that passkey signed; an allow without a valid signature decides nothing, and Claude Code's
 * own refusal (in `-p`: the tool is not run) takes over.
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

/** Writes in the project, so Claude Code asks (read-only commands run without asking). */
const TOUCH = 'touch made-by-hark && echo hark-ran'
const made = (name = 'made-by-hark') => existsSync(join(box.work, name))

/** `claude -p` on the model's one Bash call of `command`, through HARK_URL `url`; bounded. */
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

/** Runs Claude Code on `command` and hands the person the approval it asked, once open. */
async function asked(command: string, url?: string) {
  const before = await openAskIds(h)
  const run = startClaude(command, url)
  const question = await nextQuestion(h, before, run.running)
  // Nothing runs before the answer.
  expect(made()).toBe(false)
  return { ...run, question }
}

/** The run ended by itself, cleanly, and the model had its last word. */
async function finished(running: ReturnType<typeof startClaude>['running']) {
  const run = await running
  if (run.timedOut || run.exitCode !== 0) throw new Error(`claude failed: ${JSON.stringify(run)}`)
  expect(run.stdout.trim()).toBe('finished')
  return run
}

/** Claude Code refused the tool itself (the hook decided nothing): the model read its refusal. */
function expectClaudeRefused(stub: AnthropicStub, debugFile: string, reason: string) {
  const result = stub.toolResult(0)
  expect(result?.isError).toBe(true)
  expect(result?.content).toContain('needs approval')
  expect(result?.content).not.toContain('hark-ran')
  // The hook's stderr, as Claude Code logged it: why the allow was not taken.
  const log = readFileSync(debugFile, 'utf8')
  expect(log).toContain(`hark hook: the allow is not trusted (${reason}): not allowed`)
  expect(log).not.toContain('"behavior":"allow"')
}

describe(`real claude -p with signed answers (${HARK.kind})`, () => {
  test('the hook is installed as is: no --allow-unsigned anywhere', () => {
    const settings = readFileSync(settingsPath.user(box.home), 'utf8')
    const command = JSON.parse(settings).hooks.PermissionRequest[0].hooks[0].command
    expect(command).toMatch(/ hook claude --wait 540$/)
    expect(settings).not.toContain('allow-unsigned')
    expect(JSON.stringify(hookEnv(h))).not.toContain('UNSIGNED')
  })

  test('a signed allow: the command runs and the model sees its output', async () => {
    const { stub, running, question, debugFile } = await asked(TOUCH)
    expect(question.ask?.request_hash).toMatch(/^[0-9a-f]{64}$/)
    await answer(h, question, { decision: 'allow' }, 'signed')
    await finished(running)
    expect(made()).toBe(true)
    expect(stub.toolResult(0)).toEqual({ content: 'hark-ran', isError: false })
    expect(readFileSync(debugFile, 'utf8')).not.toContain('not trusted')
    expect(await warnings(h)).toEqual([])
  }, 60_000)

  test('an unsigned allow (a script, a stolen session, a database write) runs nothing', async () => {
    const { stub, running, question, debugFile } = await asked(TOUCH)
    await answer(h, question, { decision: 'allow' }, 'unsigned')
    await finished(running)
    expect(made()).toBe(false)
    expectClaudeRefused(stub, debugFile, 'the answer is not signed')
    // From the phone it looked answered: the channel says it was not acted on, and why.
    const [warning, ...more] = await warnings(h)
    expect(more).toEqual([])
    expect(warning?.body.title).toBe(NOT_ACTED_ON)
    expect(warning?.body.text).toContain(`"${TOUCH}" was not used: the answer is not signed`)
  }, 60_000)

  test('a server that turns a signed deny into an allow (proof kept) gets nothing run', async () => {
    const proxy = startProxy(h.env.HARK_URL, denyToAllow)
    proxies.push(proxy)
    const { stub, running, question, debugFile } = await asked(TOUCH, proxy.url)
    await answer(h, question, { decision: 'deny', message: 'no' }, 'signed')
    await finished(running)
    // The hook was told allow, with the person's real proof (of a deny).
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(made()).toBe(false)
    expectClaudeRefused(stub, debugFile, 'the signature is not over this answer to this question')
    expect(await warnings(h)).toHaveLength(1)
  }, 60_000)

  test("a server that replays another question's signed allow gets nothing run", async () => {
    // Earlier, the person signed an allow for another command: it ran.
    const first = await asked('touch earlier && echo hark-ran')
    await answer(h, first.question, { decision: 'allow' }, 'signed')
    await finished(first.running)
    expect(made('earlier')).toBe(true)
    const earlier = await askRecord(h, first.question.id)
    expect(earlier.message.ask?.proof).toBeDefined()
    // Now the server hands that allow and its proof as the answer to the next question, which
    // the person denies.
    const proxy = startProxy(h.env.HARK_URL, replayOf(earlier))
    proxies.push(proxy)
    const { stub, running, question, debugFile } = await asked(TOUCH, proxy.url)
    await answer(h, question, { decision: 'deny' }, 'signed')
    await finished(running)
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(made()).toBe(false)
    expectClaudeRefused(stub, debugFile, 'the signature is not over this answer to this question')
  }, 90_000)

  test('a server that hands back the allow of the same command, whole, gets it acted on once', async () => {
    // A synced passkey (its counter is always 0): the proof's binding alone must hold.
    const first = await asked(TOUCH)
    await answer(h, first.question, { decision: 'allow' }, 'signed', 0)
    await finished(first.running)
    expect(made()).toBe(true)
    rmSync(join(box.work, 'made-by-hark'))
    const earlier = await askRecord(h, first.question.id)
    // Minutes later the same command asks again and the person denies; the server answers the
    // new question with the earlier one's record: its id, its allow, its valid proof.
    const proxy = startProxy(h.env.HARK_URL, recordReplayOf(earlier))
    proxies.push(proxy)
    const { stub, running, question, debugFile } = await asked(TOUCH, proxy.url)
    await answer(h, question, { decision: 'deny' }, 'signed', 0)
    await finished(running)
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(made()).toBe(false)
    // Refused before the signature is even looked at: this hook never asked that question.
    expectClaudeRefused(stub, debugFile, 'the answer is for a question this agent did not ask')
  }, 90_000)
})
