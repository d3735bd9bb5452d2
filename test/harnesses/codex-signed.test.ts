import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type CodexSandbox, escalatedWrite, makeCodexSandbox, writeCodexConfig } from './codex.ts'
import { execCodex, HARK, reviewerRequests, runHark } from './hark-codex.ts'
import { callId, type OpenAIStub, startOpenAIStub } from './openai-stub.ts'
import {
  answer,
  denyToAllow,
  hookEnv,
  NOT_ACTED_ON,
  nextQuestion,
  openAskIds,
  pinKeys,
  type Relay,
  type SignedHark,
  startProxy,
  startSignedHark,
  warnings,
} from './signed.ts'

/**
 * The real `codex exec --approve-for-me` (0.169.0, offline against the model stub) with the hook
 * exactly as `hark install codex` wrote it: no `--allow-unsigned`, no HARK_ALLOW_UNSIGNED. The
 * sandbox's Hark profile pinned the owner's passkey (`hark keys refresh`), so a command runs only
 * after an allow that passkey signed; any other allow is a deny that says why (Codex would
 * otherwise hand an undecided action to its own model reviewer).
 */

let h: SignedHark
let box: CodexSandbox
let model: OpenAIStub
const proxies: Relay[] = []

const written = () => existsSync(join(box.work, 'out.txt'))

beforeEach(async () => {
  h = await startSignedHark()
  box = makeCodexSandbox()
  model = startOpenAIStub([escalatedWrite, { type: 'text', text: 'finished' }])
  writeCodexConfig(box.codexHome, model.baseUrl)
  const install = await runHark(box, ['install', 'codex'], h.env)
  expect([install.code, install.stderr]).toEqual([0, ''])
  await pinKeys(h, box)
})
afterEach(async () => {
  for (const p of proxies.splice(0)) p.stop()
  model.stop()
  box.cleanup()
  await h.close()
})

/** Runs Codex (bounded: 25 s) through HARK_URL `url`; returns the approval it asked, once open. */
async function asked(url?: string) {
  const before = await openAskIds(h)
  const running = execCodex(box, 'write the file', hookEnv(h, url))
  const question = await nextQuestion(h, before, running)
  // Nothing runs before the answer.
  expect(written()).toBe(false)
  return { running, question }
}

/** Codex ended by itself, cleanly, having asked the model only its own two turns. */
async function finished(running: ReturnType<typeof execCodex>) {
  const run = await running
  if (run.timedOut || run.exitCode !== 0) throw new Error(`codex failed: ${JSON.stringify(run)}`)
  // Never handed to Codex's own model reviewer: the hook decided.
  expect(reviewerRequests(model)).toEqual([])
  expect(model.requests.length).toBe(2)
  return run
}

/** What the model read for its command: a deny with the hook's reason, never its output. */
function expectDenied(reason: string) {
  const output = model.toolOutput(callId(0)) ?? ''
  expect(output).toContain('Not allowed: the answer is not signed by the person')
  expect(output).toContain(reason)
  expect(output).not.toContain('wrote')
  expect(written()).toBe(false)
}

describe(`real codex exec with signed answers (${HARK.kind})`, () => {
  test('the hook is installed as is: no --allow-unsigned anywhere', () => {
    const hooks = readFileSync(join(box.codexHome, 'hooks.json'), 'utf8')
    const config = readFileSync(join(box.codexHome, 'config.toml'), 'utf8')
    const command = JSON.parse(hooks).hooks.PermissionRequest[0].hooks[0].command
    expect(command).toMatch(/ hook codex --wait 540$/)
    expect(hooks + config).not.toContain('allow-unsigned')
    expect(JSON.stringify(hookEnv(h))).not.toContain('UNSIGNED')
  })

  test('a signed allow: the command runs and the model sees its output', async () => {
    const { running, question } = await asked()
    await answer(h, question, { decision: 'allow' }, 'signed')
    await finished(running)
    expect(readFileSync(join(box.work, 'out.txt'), 'utf8')).toBe('hello\n')
    const output = model.toolOutput(callId(0)) ?? ''
    expect(output).toContain('Process exited with code 0')
    expect(output).toContain('wrote')
    expect(await warnings(h)).toEqual([])
  })

  test('an unsigned allow is a deny that says it was not signed; the person is told', async () => {
    const { running, question } = await asked()
    await answer(h, question, { decision: 'allow' }, 'unsigned')
    await finished(running)
    expectDenied('(the answer is not signed)')
    const [warning, ...more] = await warnings(h)
    expect(more).toEqual([])
    expect(warning?.body.title).toBe(NOT_ACTED_ON)
    expect(warning?.body.text).toContain('was not used: the answer is not signed')
  })

  test('a server that turns a signed deny into an allow (proof kept): denied, nothing written', async () => {
    const proxy = startProxy(h.env.HARK_URL, denyToAllow)
    proxies.push(proxy)
    const { running, question } = await asked(proxy.url)
    await answer(h, question, { decision: 'deny', message: 'not now' }, 'signed')
    await finished(running)
    // The hook was told allow, with the person's real proof (of a deny).
    expect(proxy.rewrites).toBeGreaterThan(0)
    expectDenied('the signature is not over this answer to this question')
    expect(await warnings(h)).toHaveLength(1)
  })
})
