import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Block } from '../../src/messages/schema.ts'
import { liveCli } from '../cli/live.ts'
import type { StubTurn } from './anthropic-stub.ts'
import { runClaude, settingsPath, writeSettings } from './claude-code.ts'
import {
  bashTurn,
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
} from './hark-claude.ts'
import { waitForMessage } from './hark-codex.ts'

/**
 * The real `claude -p` (2.1.330) with Hark installed by `hark install claude`, for everything
 * besides a hook's approval: the `approve` MCP tool as `--permission-prompt-tool` (approvals and
 * AskUserQuestion), Stop (a message, or with `--reply` the person's reply continuing the
 * session), an MCP server's elicitation form, and `claude mcp list`. The person answers through
 * the API as the app does.
 */

const live = liveCli()
afterEach(cleanupWorld)

/** The next question the run asks that was not open before it. */
async function asked(world: ClaudeWorld, args: string[] = []) {
  const before = await openAskIds(live)
  const running = claudeP(live, world, args)
  return { running, next: () => nextAsk(live, before, running) }
}

const colorQuestion = {
  question: 'Which color?',
  header: 'Color',
  multiSelect: false,
  options: [
    { label: 'Red', description: 'warm' },
    { label: 'Blue', description: 'cool' },
  ],
}

describe(`--permission-prompt-tool mcp__hark__approve (${HARK.kind})`, () => {
  test('allow runs, deny reaches the model, AskUserQuestion is answered from the phone', async () => {
    const turns: StubTurn[] = [
      bashTurn('touch allowed && echo allowed-ran'),
      bashTurn('touch denied', 'Make another file'),
      { tool_use: { name: 'AskUserQuestion', input: { questions: [colorQuestion] } } },
      { text: 'finished' },
    ]
    const world = await installed(live, turns)
    // The MCP server exactly as installed, and no hooks: the prompt tool alone decides.
    const user = settingsPath.user(world.box.home)
    const { hooks: _, ...rest } = readJsonFile(user) as Record<string, unknown>
    writeSettings(user, rest)
    const { running, next } = await asked(world, ['--permission-prompt-tool', 'mcp__hark__approve'])

    const allow = await next()
    expect(allow.body.blocks?.[0]).toMatchObject({
      type: 'approval',
      tool: 'Bash',
      input: { command: 'touch allowed && echo allowed-ran' },
    })
    await live.server.person.answer(allow.id, { decision: 'allow' })

    const deny = await next()
    expect(deny.body.blocks?.[0]).toMatchObject({
      tool: 'Bash',
      input: { command: 'touch denied' },
    })
    const message = 'One file is enough'
    await live.server.person.answer(deny.id, { decision: 'deny', message })

    const question = await next()
    expect(question.body.title).toBe('Claude Code asks')
    const choice = question.body.blocks?.[0] as Block
    expect(choice).toMatchObject({ type: 'choice', label: 'Color: Which color?', multi: false })
    expect(choice.options).toEqual([
      { label: 'Red', description: 'warm' },
      { label: 'Blue', description: 'cool' },
    ])
    await live.server.person.answer(question.id, 'Blue')

    const run = await running
    expectFinished(run)
    expect(run.stdout.trim()).toBe('finished')
    expect(existsSync(join(world.box.work, 'allowed'))).toBe(true)
    expect(world.stub.toolResult(0)).toEqual({ content: 'allowed-ran', isError: false })
    expect(existsSync(join(world.box.work, 'denied'))).toBe(false)
    expect(world.stub.toolResult(1)).toEqual({ content: message, isError: true })
    expect(world.stub.toolResult(2)).toEqual({
      content:
        'Your questions have been answered: "Which color?"="Blue". You can now continue with these answers in mind.',
      isError: false,
    })
  }, 60_000)

  test("with Hark's hooks installed too: two cards; the one answered decides, its twin goes", async () => {
    const world = await installed(live, [bashTurn('touch made && echo ran'), { text: 'finished' }])
    const before = await openAskIds(live)
    const running = claudeP(live, world, ['--permission-prompt-tool', 'mcp__hark__approve'])
    // Claude Code asks the hook and the prompt tool at once: both put a card on the phone.
    const first = await nextAsk(live, before, running)
    const second = await nextAsk(live, new Set([...before, first.id]), running)
    const cards = [first, second].map((m) => ({ id: m.id, block: m.body.blocks?.[0] as Block }))
    // Only the hook knows the cwd and Claude Code's session suggestions.
    const hook = cards.find((c) => c.block.cwd === world.box.work)
    const twin = cards.find((c) => c !== hook)
    expect(twin?.block.session).toBe(hook?.block.session as string)
    await live.server.person.answer(hook?.id as string, { decision: 'allow' })
    expectFinished(await running)
    expect(world.stub.toolResult(0)).toEqual({ content: 'ran', isError: false })
    // Nothing of this run is left open on the phone.
    const twinNow = await messageById(live, twin?.id as string)
    // Withdrawn by whichever comes first: Claude Code cancelling the approve call (the MCP
    // server withdraws its card) or the PostToolUse hook.
    expect(twinNow?.ask?.status).toBe('cancelled')
    expect(['answered in the terminal', 'cancelled by the agent']).toContain(
      twinNow?.ask?.reason as string,
    )
    const { asks } = await live.server.person.openAsks()
    expect(asks.filter((m) => !before.has(m.id))).toEqual([])
  }, 60_000)
})

describe('Stop', () => {
  test("--reply: the person's reply continues the session; the next stop asks again", async () => {
    const world = await installed(
      live,
      [{ text: 'first answer' }, { text: 'second answer' }],
      // Short, so the unanswered second stop ends the run soon.
      ['--reply', '--wait', '5'],
    )
    const { running, next } = await asked(world)
    const first = await next()
    expect(first.body).toMatchObject({ title: 'Claude Code finished', text: 'first answer' })
    expect(first.body.blocks?.[0]).toMatchObject({ type: 'text_input', id: 'reply' })
    const reply = 'Also print the date'
    await live.server.person.answer(first.id, reply)
    // The second stop (after the reply's turn) asks again; left unanswered, it ends the run.
    const second = await next()
    expect(second.body.text).toBe('second answer')
    const run = await running
    expectFinished(run)
    expect(run.stdout.trim()).toBe('second answer')
    const messages = JSON.stringify(world.stub.requests.at(-1)?.body.messages)
    expect(messages).toContain(JSON.stringify(`Stop hook feedback:\n${reply}`).slice(1, -1))
    // Unanswered, the second reply question expired with the wait, not left open on the phone.
    expect((await messageById(live, second.id))?.ask).toMatchObject({ status: 'expired' })
  }, 60_000)

  test('without --reply: a "Claude Code finished" message with the last text', async () => {
    const text = `All done: ${crypto.randomUUID()}`
    const world = await installed(live, [{ text }])
    expectFinished(await claudeP(live, world))
    const sent = await waitForMessage(live, (m) => m.body.text === text)
    expect(sent?.sender).toBe('agent')
    expect(sent?.body.title).toBe('Claude Code finished')
    expect(sent?.ask).toBeUndefined()
  }, 60_000)
})

describe('Elicitation (an MCP server asks the person a form)', () => {
  const deploy: StubTurn = { tool_use: { name: 'mcp__fixture__deploy', input: {} } }

  /** Runs the fixture's `deploy` tool and answers its form with `answer`. */
  async function elicited(answer: Record<string, unknown>) {
    const world = await installed(live, [deploy, { text: 'deployed' }])
    const { running, next } = await asked(world, [
      '--mcp-config',
      fixtureConfig(world.box),
      '--allowedTools',
      'mcp__fixture__deploy',
    ])
    const form = await next()
    await live.server.person.answer(form.id, answer)
    expectFinished(await running)
    const result = await eventually(() => world.stub.toolResult(0))
    return { form, result, received: JSON.parse(result?.content ?? 'null') }
  }

  test('filled in: the MCP server receives accept with typed content', async () => {
    const { form, result, received } = await elicited({
      f0: 'staging',
      f1: 3,
      f2: true,
      hark_decision: 'accept',
    })
    expect(form.body.title).toBe('fixture asks')
    const blocks = form.body.blocks as Block[]
    expect(blocks.map((b) => [b.type, b.id])).toEqual([
      ['markdown', undefined],
      ['choice', 'f0'],
      ['number_input', 'f1'],
      ['toggle', 'f2'],
      ['choice', 'hark_decision'],
    ])
    expect(blocks[0]?.text).toBe('Deploy settings?')
    expect(blocks[2]).toMatchObject({ min: 1, max: 5 })
    expect(result?.isError).toBe(false)
    expect(received).toEqual({
      action: 'accept',
      content: { env: 'staging', replicas: 3, confirm: true },
    })
    expect(typeof received.content.replicas).toBe('number')
  }, 60_000)

  test('declined: the MCP server receives decline', async () => {
    const { received } = await elicited({ hark_decision: 'decline' })
    expect(received).toEqual({ action: 'decline' })
  }, 60_000)
})

describe('claude mcp list', () => {
  test('after "hark install claude" (user scope) it shows hark connected', async () => {
    const world = await installed(live, [], ['--scope', 'user'])
    const run = await runClaude({
      cwd: world.box.work,
      home: world.box.home,
      baseUrl: world.stub.baseUrl,
      args: ['mcp', 'list'],
      env: live.env,
      timeoutMs: 30_000,
    })
    expectFinished(run)
    const line = run.stdout.split('\n').find((l) => l.startsWith('hark: '))
    expect(line).toBe(`hark: ${[...HARK.argv, 'mcp'].join(' ')} - ✔ Connected`)
  }, 60_000)
})
