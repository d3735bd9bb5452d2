import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import { deadUrl } from '../cli/hooks.ts'
import { liveCli } from '../cli/live.ts'
import { type CodexSandbox, escalatedWrite, makeCodexSandbox, writeCodexConfig } from './codex.ts'
import {
  channelMessages,
  execCodex,
  HARK,
  nextApproval,
  openApprovalIds,
  reviewerRequests,
  runHark,
  waitForMessage,
} from './hark-codex.ts'
import { callId, type OpenAIStub, type StubTurn, startOpenAIStub } from './openai-stub.ts'

/**
 * The real `codex exec --approve-for-me` (0.169.0) against the loopback model stub, with Hark
 * installed by `hark install codex`: Codex runs the hook exactly as installed (trusted, no
 * `--dangerously-bypass-hook-trust`), and the person answers through the API as the app does.
 * The hark under test is `dist/hark` when it is fresh, else `bun src/main.ts` (see HARK).
 */

const live = liveCli()
/** Plumbing: answers here come unsigned from the API; test/trust/* checks the signatures. */
const unsignedEnv = () => ({ ...live.env, HARK_ALLOW_UNSIGNED: '1' })
let sandbox: CodexSandbox | undefined
let stub: OpenAIStub | undefined
afterEach(() => {
  stub?.stop()
  sandbox?.cleanup()
  stub = undefined
  sandbox = undefined
})

/** A sandbox whose config.toml points Codex at a fresh stub, with `hark install codex` run. */
async function installed(turns: StubTurn[], installArgs: string[] = []) {
  const box = makeCodexSandbox()
  sandbox = box
  const model = startOpenAIStub(turns)
  stub = model
  writeCodexConfig(box.codexHome, model.baseUrl)
  const install = await runHark(box, ['install', 'codex', ...installArgs], live.env)
  expect([install.code, install.stderr]).toEqual([0, ''])
  return { box, model }
}

/** Runs Codex on the escalated write and returns the approval it asked, once it is open. */
async function askedApproval(installArgs: string[] = []) {
  const { box, model } = await installed(
    [escalatedWrite, { type: 'text', text: 'finished' }],
    installArgs,
  )
  const before = await openApprovalIds(live)
  const running = execCodex(box, 'write the file', unsignedEnv())
  const question = await nextApproval(live, before, running)
  if (!question) throw new Error(`Codex asked no approval: ${JSON.stringify(await running)}`)
  return { box, model, running, question }
}

/** The message `id` as the person's app sees it now. */
const messageById = async (id: string): Promise<Message | undefined> =>
  (await channelMessages(live)).find((m) => m.id === id)

/** The run's own two turns and nothing else: Codex's model reviewer was never asked. */
const expectNoReviewer = (model: OpenAIStub) => {
  expect(reviewerRequests(model)).toEqual([])
  expect(model.requests.length).toBe(2)
}

describe(`real codex exec with "hark install codex" (${HARK.kind})`, () => {
  test('allow: the person allows on the phone, the command runs and the model sees it', async () => {
    const { box, model, running, question } = await askedApproval()
    expect(question.body.title).toBe('Codex wants to run a command')
    expect(question.body.blocks?.[0]).toMatchObject({
      type: 'approval',
      tool: 'Bash',
      input: { command: escalatedWrite.cmd, description: escalatedWrite.justification },
      summary: escalatedWrite.cmd,
      cwd: box.work,
      scopes: ['once'],
    })
    // Nothing runs before the answer.
    expect(existsSync(join(box.work, 'out.txt'))).toBe(false)
    await live.server.person.answer(question.id, { decision: 'allow' })
    const run = await running
    expect([run.timedOut, run.exitCode]).toEqual([false, 0])
    expect(readFileSync(join(box.work, 'out.txt'), 'utf8')).toBe('hello\n')
    const output = model.toolOutput(callId(0)) ?? ''
    expect(output).toContain('Process exited with code 0')
    expect(output).toContain('wrote')
    expectNoReviewer(model)
    expect((await messageById(question.id))?.ask?.status).toBe('answered')
  })

  test("deny: nothing runs, and the model reads the person's message", async () => {
    const { box, model, running, question } = await askedApproval()
    const message = 'Not on a Friday: write it to /tmp instead'
    await live.server.person.answer(question.id, { decision: 'deny', message })
    const run = await running
    expect([run.timedOut, run.exitCode]).toEqual([false, 0])
    expect(existsSync(join(box.work, 'out.txt'))).toBe(false)
    expect(model.toolOutput(callId(0))).toContain(message)
    expectNoReviewer(model)
  })

  test('no answer within --wait: denied saying so, never handed to the reviewer', async () => {
    const { box, model, running, question } = await askedApproval(['--wait', '2'])
    const run = await running
    expect([run.timedOut, run.exitCode]).toEqual([false, 0])
    expect(existsSync(join(box.work, 'out.txt'))).toBe(false)
    const output = model.toolOutput(callId(0)) ?? ''
    expect(output).toContain('Rejected')
    expect(output).toContain('no answer from the person within 2 s')
    // Silence is never consent: not Codex's model reviewer either.
    expectNoReviewer(model)
    // The question expired with the wait: the phone no longer offers an action already refused.
    const after = await messageById(question.id)
    expect(after?.ask?.status).toBe('expired')
    const { asks } = await live.server.person.openAsks('approval')
    expect(asks.map((m) => m.id)).not.toContain(question.id)
  })

  test('no server: denied at once with the reason, and no reviewer', async () => {
    const { box, model } = await installed([escalatedWrite, { type: 'text', text: 'finished' }])
    const env = { HARK_URL: await deadUrl(), HARK_TOKEN: live.server.agentToken }
    const run = await execCodex(box, 'write the file', env)
    expect([run.timedOut, run.exitCode]).toEqual([false, 0])
    expect(existsSync(join(box.work, 'out.txt'))).toBe(false)
    const output = model.toolOutput(callId(0)) ?? ''
    expect(output).toContain('Not allowed: hark could not ask the person')
    expectNoReviewer(model)
    // One quick retry, not a wait: well under the hook's --wait (540 s) and its 600 s timeout.
    expect(run.ms).toBeLessThan(15_000)
  })

  test('notify: the last assistant message of the turn comes as "Codex finished"', async () => {
    const text = `All done: ${crypto.randomUUID()}`
    const { box } = await installed([{ type: 'text', text }])
    const run = await execCodex(box, 'say something', unsignedEnv(), false)
    expect([run.timedOut, run.exitCode]).toEqual([false, 0])
    // Codex spawns notify and does not wait for it: poll the channel.
    const sent = await waitForMessage(live, (m) => m.body.text === text)
    expect(sent?.sender).toBe('agent')
    expect(sent?.body.title).toBe('Codex finished')
    expect(sent?.ask).toBeUndefined()
  })
})
