import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { liveCli } from '../cli/live.ts'
import type { StubTurn } from './anthropic-stub.ts'
import { settingsPath } from './claude-code.ts'
import {
  approvalsOf,
  bashTurn,
  blockOf,
  type ClaudeWorld,
  claudeP,
  cleanupWorld,
  eventually,
  expectFinished,
  fixtureConfig,
  HARK,
  installed,
  messageById,
  nextAsk,
  openAskIds,
  readJsonFile,
  signal,
} from './hark-claude.ts'

/**
 * The real `claude -p` (2.1.330) against the loopback model stub, with Hark installed by
 * `hark install claude`: Claude Code runs Hark's hooks exactly as installed, and the person
 * answers the approvals through the API as the app does.
 */

const live = liveCli()
afterEach(cleanupWorld)

/** Writes in the project, so Claude Code asks (read-only commands are allowed without asking). */
const TOUCH = 'touch made-by-hark && echo hark-ran'
const made = (w: ClaudeWorld) => existsSync(join(w.box.work, 'made-by-hark'))

/** Installs Hark, starts `claude -p` on `turns`, and returns the approval it asked, once open. */
async function askedApproval(turns: StubTurn[], installArgs: string[] = []) {
  const world = await installed(live, turns, installArgs)
  const before = await openAskIds(live)
  const running = claudeP(live, world)
  const question = await nextAsk(live, before, running, 'approval')
  return { world, running, question }
}

/** The question once it is no longer open (polled for up to 15 s). */
const settled = (id: string) =>
  eventually(async () => {
    const message = await messageById(live, id)
    return message?.ask?.status === 'open' ? undefined : message
  })

/** Session ids Claude Code keeps a transcript for (`~/.claude/projects/<dir>/<id>.jsonl`). */
const transcripts = (w: ClaudeWorld) => {
  const projects = join(w.box.home, '.claude', 'projects')
  return readdirSync(projects).flatMap((dir) =>
    readdirSync(join(projects, dir))
      .filter((f) => f.endsWith('.jsonl'))
      .map((f) => f.slice(0, -'.jsonl'.length)),
  )
}

describe(`real claude -p with "hark install claude" (${HARK.kind})`, () => {
  test('allow: the card says what, where and which session; after Allow it runs', async () => {
    const { world, running, question } = await askedApproval([
      bashTurn(TOUCH),
      { text: 'finished' },
    ])
    expect(question.body.title).toBe('Claude Code wants to run a command')
    const block = blockOf(question)
    expect(block).toMatchObject({
      type: 'approval',
      tool: 'Bash',
      input: { command: TOUCH, description: 'Make a file' },
      summary: TOUCH,
      cwd: world.box.work,
      scopes: ['once', 'session'],
    })
    // Nothing runs before the answer.
    expect(made(world)).toBe(false)
    await live.server.person.answer(question.id, { decision: 'allow' })
    const run = await running
    expectFinished(run)
    expect(made(world)).toBe(true)
    expect(world.stub.toolResult(0)).toEqual({ content: 'hark-ran', isError: false })
    expect(run.stdout.trim()).toBe('finished')
    // The session on the card is the one Claude Code ran (its transcript's name).
    expect(transcripts(world)).toEqual([block.session as string])
    expect((await messageById(live, question.id))?.ask?.status).toBe('answered')
  }, 60_000)

  test("deny with a message: nothing runs; the model reads exactly the person's words", async () => {
    const { world, running, question } = await askedApproval([bashTurn(TOUCH), { text: 'ok' }])
    const message = 'Not in the repository: write it under /tmp instead'
    await live.server.person.answer(question.id, { decision: 'deny', message })
    expectFinished(await running)
    expect(made(world)).toBe(false)
    expect(world.stub.toolResult(0)).toEqual({ content: message, isError: true })
  }, 60_000)

  test('allow for this session: the next similar command asks nothing, and no file keeps it', async () => {
    // Claude Code suggests a `Bash(git init *)` rule for the project's settings.local.json; the
    // person allowed it for this session only.
    const { world, running, question } = await askedApproval([
      bashTurn('git init -q first', 'Make a repository'),
      bashTurn('git init -q second', 'Make another'),
      { text: 'two repositories' },
    ])
    expect(blockOf(question).scopes).toEqual(['once', 'session'])
    await live.server.person.answer(question.id, { decision: 'allow', scope: 'session' })
    const run = await running
    expectFinished(run)
    expect(existsSync(join(world.box.work, 'first', '.git'))).toBe(true)
    expect(existsSync(join(world.box.work, 'second', '.git'))).toBe(true)
    expect(world.stub.toolResult(1)?.isError).toBe(false)
    // One approval for the two commands.
    expect(await approvalsOf(live, blockOf(question).session as string)).toHaveLength(1)
    // Nothing remembered beyond the session: no local settings, no rule in the user's.
    expect(existsSync(settingsPath.local(world.box.work))).toBe(false)
    const user = readJsonFile(settingsPath.user(world.box.home)) as Record<string, unknown>
    expect(user.permissions).toBeUndefined()
  }, 60_000)

  test('no answer within --wait 2: no decision, Claude Code refuses, the card expired then', async () => {
    const { world, running, question } = await askedApproval(
      [bashTurn(TOUCH), { text: 'ok' }],
      ['--wait', '2'],
    )
    const run = await running
    expectFinished(run)
    expect(made(world)).toBe(false)
    // Claude Code's own refusal in -p (the hook printed nothing): never an allow.
    const result = world.stub.toolResult(0)
    expect(result?.isError).toBe(true)
    expect(result?.content).toContain('needs approval')
    const after = await messageById(live, question.id)
    expect(after?.ask?.status).toBe('expired')
  }, 60_000)

  test('answered in the terminal: PostToolUse withdraws the card; the hook decides nothing', async () => {
    const { world, running, question, debugFile } = await answeredInTerminal(bashTurn(TOUCH))
    expect(question.body.title).toBe('Claude Code wants to run a command')
    expect(made(world)).toBe(true)
    expect(world.stub.toolResult(0)).toEqual({ content: 'hark-ran', isError: false })
    const ended = await hookEnded(debugFile, 'Bash')
    expect(ended).toContain('hark hook: the question was cancelled')
    expect(ended).not.toContain('hookSpecificOutput')
    signal(world.box, 'release')
    expect((await running).stdout.trim()).toBe('finished')
  }, 60_000)

  test('an AskUserQuestion answered in the terminal is withdrawn from the phone too', async () => {
    const questions = [
      {
        question: 'Which color?',
        header: 'Color',
        multiSelect: false,
        options: [
          { label: 'Red', description: 'warm' },
          { label: 'Blue', description: 'cool' },
        ],
      },
    ]
    const { world, running, question, debugFile } = await answeredInTerminal({
      tool_use: { name: 'AskUserQuestion', input: { questions } },
    })
    expect(question.body.title).toBe('Claude Code asks')
    // The terminal's answer (the fixture picks the first option) is the one the model read.
    expect(world.stub.toolResult(0)?.content).toContain('"Which color?"="Red"')
    expect(await hookEnded(debugFile, 'AskUserQuestion')).not.toContain('hookSpecificOutput')
    signal(world.box, 'release')
    expectFinished(await running)
  }, 60_000)
})

/**
 * Hark's hooks as installed, and a second permission path racing them, as Claude Code's own
 * prompt does: the tests' prompt tool `terminal`, allowing (or answering) once told to. The
 * person answers there while Hark's card is open on the phone. `hold` then keeps the session
 * from stopping, so what is seen meanwhile is PostToolUse's doing, not Stop's: the card is
 * withdrawn and the tool's result reached the model. The caller releases `hold`.
 */
async function answeredInTerminal(first: StubTurn) {
  const turns: StubTurn[] = [
    first,
    { tool_use: { name: 'mcp__fixture__hold', input: {} } },
    { text: 'finished' },
  ]
  const world = await installed(live, turns)
  const before = await openAskIds(live)
  const debugFile = join(world.box.root, 'claude-debug.log')
  const running = claudeP(live, world, [
    '--mcp-config',
    fixtureConfig(world.box),
    '--permission-prompt-tool',
    'mcp__fixture__terminal',
    '--allowedTools',
    'mcp__fixture__hold',
    // Claude Code's log of each hook's outcome: how the waiting hook is seen to end.
    '--debug-file',
    debugFile,
  ])
  const question = await nextAsk(live, before, running)
  expect(world.stub.toolResult(0)).toBeUndefined()
  signal(world.box, 'go')
  const after = await settled(question.id)
  expect(after?.ask?.status).toBe('cancelled')
  expect(after?.ask?.reason).toBe('answered in the terminal')
  expect(await eventually(() => world.stub.toolResult(0))).toBeDefined()
  // Still in the `hold` turn: Stop has not run.
  expect(world.stub.toolResult(1)).toBeUndefined()
  return { world, running, question, debugFile }
}

/**
 * Claude Code's debug log line for the end of the PermissionRequest hook (what it printed:
 * `success:\n<stdout>stderr:\n<stderr>`), once there; polled for up to 15 s.
 */
async function hookEnded(debugFile: string, tool: string): Promise<string> {
  const line = new RegExp(`"Hook PermissionRequest:${tool} \\(PermissionRequest\\) success:.*"`)
  const deadline = Date.now() + 15_000
  for (;;) {
    const text = existsSync(debugFile) ? readFileSync(debugFile, 'utf8') : ''
    const found = line.exec(text)?.[0]
    if (found) return JSON.parse(found) as string
    if (Date.now() > deadline) throw new Error('the PermissionRequest hook never ended')
    await Bun.sleep(50)
  }
}
