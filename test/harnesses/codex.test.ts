import { afterEach, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  type CodexSandbox,
  escalatedWrite,
  makeCodexSandbox,
  runCodex,
  trustedPermissionHookToml,
  writeCodexConfig,
} from './codex'
import { callId, type OpenAIStub, startOpenAIStub } from './openai-stub'

/**
 * Proves the harness: the real `codex exec` against the loopback stub, with a PermissionRequest
 * hook (a tiny shell script, not Hark) that Codex trusts through `hooks.state` alone, without
 * `--dangerously-bypass-hook-trust`.
 */

let sandbox: CodexSandbox | undefined
let stub: OpenAIStub | undefined
afterEach(() => {
  stub?.stop()
  sandbox?.cleanup()
  stub = undefined
  sandbox = undefined
})

/** Writes an executable hook that saves its stdin next to itself and prints `stdout`. */
const writeHook = (dir: string, stdout: string) => {
  const path = join(dir, 'hook.sh')
  writeFileSync(
    path,
    `#!/bin/sh\ncat > '${join(dir, 'hook-stdin.json')}'\nprintf '%s\\n' '${stdout}'\n`,
  )
  chmodSync(path, 0o755)
  return path
}

const decision = (body: object) =>
  JSON.stringify({ hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: body } })

const execWithHook = async (hookStdout: string) => {
  sandbox = makeCodexSandbox()
  stub = startOpenAIStub([escalatedWrite, { type: 'text', text: 'finished' }])
  const hook = writeHook(sandbox.root, hookStdout)
  writeCodexConfig(sandbox.codexHome, stub.baseUrl, {
    tables: trustedPermissionHookToml(sandbox.codexHome, { command: hook }),
  })
  const run = await runCodex({
    cwd: sandbox.work,
    codexHome: sandbox.codexHome,
    home: sandbox.home,
    args: ['exec', '--skip-git-repo-check', '--approve-for-me', 'write the file'],
    timeoutMs: 20_000,
  })
  expect(run.timedOut).toBe(false)
  expect(run.exitCode).toBe(0)
  const stdin = JSON.parse(readFileSync(join(sandbox.root, 'hook-stdin.json'), 'utf8'))
  return { run, stdin, sandbox, stub }
}

describe('real codex exec against the loopback stub', () => {
  test('a trusted PermissionRequest hook that allows lets the command run', async () => {
    const { stdin, sandbox, stub } = await execWithHook(decision({ behavior: 'allow' }))
    expect(stdin).toMatchObject({
      hook_event_name: 'PermissionRequest',
      tool_name: 'Bash',
      tool_input: { command: escalatedWrite.cmd, description: escalatedWrite.justification },
      cwd: sandbox.work,
    })
    expect(readFileSync(join(sandbox.work, 'out.txt'), 'utf8')).toBe('hello\n')
    expect(stub.toolOutput(callId(0))).toContain('Process exited with code 0')
    expect(stub.toolOutput(callId(0))).toContain('wrote')
    // Exactly the two scripted turns: no automatic (model) review was consulted.
    expect(stub.requests.length).toBe(2)
  })

  test('a hook that denies keeps the command from running and the model sees why', async () => {
    const message = 'Denied in Hark: not on a Friday'
    const { sandbox, stub } = await execWithHook(decision({ behavior: 'deny', message }))
    expect(existsSync(join(sandbox.work, 'out.txt'))).toBe(false)
    expect(stub.toolOutput(callId(0))).toContain(message)
    expect(stub.requests.length).toBe(2)
  })

  test('an allow that carries updatedPermissions (a rule for the session) is refused: Codex offers no session rules to a hook', async () => {
    // What Claude Code takes to remember a prefix rule for the session (issue 29, item 7).
    const rule = {
      type: 'addRules',
      rules: [{ toolName: 'Bash', ruleContent: 'echo:*' }],
      behavior: 'allow',
      destination: 'session',
    }
    const { run, stdin, sandbox, stub } = await execWithHook(
      decision({ behavior: 'allow', updatedPermissions: [rule] }),
    )
    // The event suggests nothing to remember, and the answer that tries is not taken: the hook
    // counts as failed (its schema: "fail closed if this field is present"), the action goes
    // to Codex's own model reviewer, and nothing runs.
    expect(stdin.permission_suggestions).toBeUndefined()
    expect(run.stdout + run.stderr).toContain('hook: PermissionRequest Failed')
    expect(existsSync(join(sandbox.work, 'out.txt'))).toBe(false)
    expect(stub.requests.length).toBeGreaterThan(2)
  })

  test('without its hooks.state entry the hook never runs (trust is what enables it)', async () => {
    sandbox = makeCodexSandbox()
    stub = startOpenAIStub([escalatedWrite, { type: 'text', text: 'finished' }])
    const hook = writeHook(sandbox.root, decision({ behavior: 'allow' }))
    const trusted = trustedPermissionHookToml(sandbox.codexHome, { command: hook })
    // The same declaration, minus the `[hooks.state."…"]` table and its trusted_hash.
    const untrusted = trusted.slice(0, trusted.indexOf('[hooks.state.'))
    writeCodexConfig(sandbox.codexHome, stub.baseUrl, { tables: untrusted })
    const run = await runCodex({
      cwd: sandbox.work,
      codexHome: sandbox.codexHome,
      home: sandbox.home,
      args: ['exec', '--skip-git-repo-check', '--approve-for-me', 'write the file'],
      timeoutMs: 20_000,
    })
    expect(run.timedOut).toBe(false)
    expect(existsSync(join(sandbox.root, 'hook-stdin.json'))).toBe(false)
    expect(existsSync(join(sandbox.work, 'out.txt'))).toBe(false)
    // Codex's own model reviewer took the decision instead: it asked the stub, got no verdict.
    expect(stub.requests.length).toBeGreaterThan(2)
  })

  test('notify gets the last assistant message after the turn', async () => {
    sandbox = makeCodexSandbox()
    stub = startOpenAIStub([{ type: 'text', text: 'All done here.' }])
    const out = join(sandbox.root, 'notify.json')
    const script = join(sandbox.root, 'notify.sh')
    // Codex spawns notify without a shell and appends the event JSON as the last argument.
    writeFileSync(script, `#!/bin/sh\nfor last; do :; done\nprintf '%s' "$last" > '${out}'\n`)
    chmodSync(script, 0o755)
    writeCodexConfig(sandbox.codexHome, stub.baseUrl, { notify: [script] })
    const run = await runCodex({
      cwd: sandbox.work,
      codexHome: sandbox.codexHome,
      home: sandbox.home,
      args: ['exec', '--skip-git-repo-check', 'say something'],
      timeoutMs: 20_000,
    })
    expect(run.exitCode).toBe(0)
    // notify is fire-and-forget: give the child a moment to write if Codex exited first.
    for (let i = 0; i < 50 && !existsSync(out); i++) await Bun.sleep(100)
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({
      type: 'agent-turn-complete',
      'last-assistant-message': 'All done here.',
      'input-messages': ['say something'],
      cwd: sandbox.work,
    })
  })
})
