import { afterEach, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type AnthropicStub, type StubTurn, startAnthropicStub } from './anthropic-stub'
import {
  type ClaudeSandbox,
  hooksFor,
  makeClaudeSandbox,
  runClaude,
  settingsPath,
  writeSettings,
} from './claude-code'

/**
 * Proves the harness: the real `claude -p` against the loopback stub, with hooks that are tiny
 * shell scripts (not Hark) in the project's .claude/settings.json. What they show is the contract
 * `hark hook claude` relies on (see the research notes on Claude Code 2.1.330).
 */

let sandbox: ClaudeSandbox | undefined
let stub: AnthropicStub | undefined
afterEach(() => {
  stub?.stop()
  sandbox?.cleanup()
  stub = undefined
  sandbox = undefined
})

/**
 * A command that writes a file: read-only commands (`echo`, `ls`) are allowed by Claude Code
 * itself and never reach a PermissionRequest hook.
 */
const COMMAND = 'touch made-by-claude && echo ran-ok'

/**
 * Writes an executable hook that saves its stdin as `<name>-stdin.json` next to itself and prints
 * `<name>-reply.json` once (then removes it), so a hook can decide once and then stay silent.
 */
const writeHook = (dir: string, name: string, reply?: object) => {
  const path = join(dir, `${name}.sh`)
  const replyPath = join(dir, `${name}-reply.json`)
  if (reply) writeFileSync(replyPath, JSON.stringify(reply))
  writeFileSync(
    path,
    [
      '#!/bin/sh',
      `cat > '${join(dir, `${name}-stdin.json`)}'`,
      `if [ -f '${replyPath}' ]; then cat '${replyPath}'; rm -f '${replyPath}'; fi`,
      'exit 0',
      '',
    ].join('\n'),
  )
  chmodSync(path, 0o755)
  return path
}

const hookStdin = (name: string) =>
  JSON.parse(readFileSync(join(sandbox!.root, `${name}-stdin.json`), 'utf8'))

const decision = (body: object) => ({
  hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: body },
})

/** Runs `claude -p` in a fresh sandbox with the given hooks and model script. */
const runWith = async (
  turns: StubTurn[],
  hooks: Record<string, { reply?: object }>,
  prompt = 'run it',
) => {
  sandbox = makeClaudeSandbox()
  stub = startAnthropicStub(turns)
  const commands = Object.fromEntries(
    Object.entries(hooks).map(([event, { reply }]) => [
      event,
      { command: writeHook(sandbox!.root, event, reply), timeout: 30 },
    ]),
  )
  writeSettings(settingsPath.project(sandbox.work), { hooks: hooksFor(commands) })
  const run = await runClaude({
    cwd: sandbox.work,
    home: sandbox.home,
    baseUrl: stub.baseUrl,
    args: ['-p', prompt],
    timeoutMs: 20_000,
  })
  expect(run.timedOut).toBe(false)
  expect(run.exitCode).toBe(0)
  return { run, sandbox, stub }
}

const bashTurn: StubTurn = {
  text: 'I will run it.',
  tool_use: { name: 'Bash', input: { command: COMMAND, description: 'Make a file' } },
}

describe('real claude -p against the loopback stub', () => {
  test('a PermissionRequest hook that allows lets the command run', async () => {
    const { run, sandbox, stub } = await runWith([bashTurn, { text: 'finished' }], {
      PermissionRequest: { reply: decision({ behavior: 'allow' }) },
    })
    expect(hookStdin('PermissionRequest')).toMatchObject({
      hook_event_name: 'PermissionRequest',
      tool_name: 'Bash',
      tool_input: { command: COMMAND, description: 'Make a file' },
      cwd: sandbox.work,
      permission_mode: 'default',
      session_id: expect.any(String),
      transcript_path: expect.any(String),
      permission_suggestions: expect.any(Array),
    })
    expect(existsSync(join(sandbox.work, 'made-by-claude'))).toBe(true)
    expect(stub.toolResult(0)).toEqual({ content: 'ran-ok', isError: false })
    expect(run.stdout.trim()).toBe('finished')
  })

  test('a deny with a message never runs the command; the model reads the message', async () => {
    const message = 'The person said no: write it under /tmp instead'
    const { sandbox, stub } = await runWith([bashTurn, { text: 'understood' }], {
      PermissionRequest: { reply: decision({ behavior: 'deny', message }) },
    })
    expect(existsSync(join(sandbox.work, 'made-by-claude'))).toBe(false)
    expect(stub.toolResult(0)).toEqual({ content: message, isError: true })
  })

  test('no decision printed: -p falls back to its own refusal, nothing runs', async () => {
    const { sandbox, stub } = await runWith([bashTurn, { text: 'ok' }], {
      PermissionRequest: {},
    })
    expect(existsSync(join(sandbox.work, 'made-by-claude'))).toBe(false)
    const result = stub.toolResult(0)
    expect(result?.isError).toBe(true)
    expect(result?.content).toContain('needs approval')
  })

  test('a Stop hook that blocks once continues the session with its reason', async () => {
    const reason = 'The person replied: now say goodbye'
    const { run, stub } = await runWith([{ text: 'first' }, { text: 'goodbye' }], {
      Stop: { reply: { decision: 'block', reason } },
    })
    // The second model request carries the reason as the person's next words.
    const last = stub.requests.at(-1)?.body.messages
    expect(JSON.stringify(last)).toContain(`Stop hook feedback:\\n${reason}`)
    expect(run.stdout.trim()).toBe('goodbye')
    // The hook's stdin file holds the second stop: marked as following a block, with the new text.
    expect(hookStdin('Stop')).toMatchObject({
      hook_event_name: 'Stop',
      stop_hook_active: true,
      last_assistant_message: 'goodbye',
    })
  })
})
