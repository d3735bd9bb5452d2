import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { claudeBin } from './agent-clis.ts'
import { type AnthropicStub, startAnthropicStub } from './anthropic-stub.ts'
import { runBounded } from './bounded.ts'
import {
  type ClaudeSandbox,
  claudeEnv,
  makeClaudeSandbox,
  runClaude,
  settingsPath,
  writeSettings,
} from './claude-code.ts'
import { bashTurn, HARK } from './hark-claude.ts'
import {
  answer,
  denyToAllow,
  nextQuestion,
  openAskIds,
  pinKeys,
  type Relay,
  type SignedHark,
  startProxy,
  startSignedHark,
} from './signed.ts'

/**
 * Headless runs with the real `claude -p` (2.1.330, offline against the model stub): a PreToolUse
 * hook `hark hook claude --defer-after 2` asks the person, and when they have not answered in
 * 2 s, leaves the card open and defers. The run stops at once (`stop_reason: "tool_deferred"`);
 * once the person answers, `hark resume claude SESSION` resumes it and the hook reads the answer,
 * its passkey signature checked against the pinned key.
 */

let h: SignedHark
let box: ClaudeSandbox
let stub: AnthropicStub
const proxies: Relay[] = []
const TOUCH = 'touch made-by-hark && echo hark-ran'
const made = () => existsSync(join(box.work, 'made-by-hark'))

beforeEach(async () => {
  h = await startSignedHark()
  box = makeClaudeSandbox()
  await pinKeys(h, box)
  const hook = [...HARK.argv, 'hook', 'claude', '--defer-after', '2'].join(' ')
  writeSettings(settingsPath.user(box.home), {
    hooks: {
      PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: hook, timeout: 60 }] }],
    },
  })
  stub = startAnthropicStub([bashTurn(TOUCH), { text: 'finished' }])
})
afterEach(async () => {
  for (const p of proxies.splice(0)) p.stop()
  stub.stop()
  box.cleanup()
  await h.close()
})

/** The first run: it defers, and stops cleanly with the card still open on the phone. */
async function deferredRun(url = h.env.HARK_URL) {
  const before = await openAskIds(h)
  const run = await runClaude({
    cwd: box.work,
    home: box.home,
    baseUrl: stub.baseUrl,
    args: ['-p', 'do it', '--output-format', 'json'],
    env: { ...h.env, HARK_URL: url },
    timeoutMs: 45_000,
  })
  expect([run.exitCode, run.timedOut]).toEqual([0, false])
  const result = JSON.parse(run.stdout)
  expect(result.stop_reason).toBe('tool_deferred')
  expect(result.deferred_tool_use).toMatchObject({ name: 'Bash', input: { command: TOUCH } })
  expect(made()).toBe(false)
  const card = await nextQuestion(h, before, Promise.resolve(undefined as unknown))
  expect(card.body.blocks?.[0]).toMatchObject({
    type: 'approval',
    tool: 'Bash',
    input: { command: TOUCH },
  })
  return { session: result.session_id as string, card }
}

/** `hark resume claude SESSION -- --output-format json`, claude on its PATH. */
function resume(session: string, url = h.env.HARK_URL) {
  const env = claudeEnv(box.home, stub.baseUrl, { ...h.env, HARK_URL: url })
  env.PATH = `${dirname(claudeBin())}:${env.PATH}`
  return runBounded([...HARK.argv, 'resume', 'claude', session, '--', '--output-format', 'json'], {
    cwd: box.work,
    env,
    timeoutMs: 45_000,
  })
}

describe(`real claude -p, a deferred action resumed once the person answers (${HARK.kind})`, () => {
  test('no answer within --defer-after: the run stops; a signed allow later runs it on resume', async () => {
    const { session, card } = await deferredRun()
    await answer(h, card, { decision: 'allow' }, 'signed')
    const run = await resume(session)
    expect([run.exitCode, run.timedOut]).toEqual([0, false])
    expect(JSON.parse(run.stdout)).toMatchObject({ result: 'finished', session_id: session })
    expect(made()).toBe(true)
    expect(stub.toolResult(0)).toEqual({ content: 'hark-ran', isError: false })
  }, 120_000)

  test('a deny on the phone: on resume the tool is refused with its message', async () => {
    const { session, card } = await deferredRun()
    await answer(h, card, { decision: 'deny', message: 'not on main' }, 'signed')
    const run = await resume(session)
    expect([run.exitCode, run.timedOut]).toEqual([0, false])
    expect(made()).toBe(false)
    expect(stub.toolResult(0)?.content).toContain('not on main')
  }, 120_000)

  test('a server turning the signed deny into an allow gets nothing run on resume', async () => {
    const proxy = startProxy(h.env.HARK_URL, denyToAllow)
    proxies.push(proxy)
    const { session, card } = await deferredRun(proxy.url)
    await answer(h, card, { decision: 'deny' }, 'signed')
    const run = await resume(session, proxy.url)
    expect([run.exitCode, run.timedOut]).toEqual([0, false])
    expect(proxy.rewrites).toBeGreaterThan(0)
    expect(made()).toBe(false)
    expect(stub.toolResult(0)?.content).toContain('the signature is not over this answer')
  }, 120_000)
})
