import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { claudeBin } from './agent-clis.ts'
import { type AnthropicStub, startAnthropicStub } from './anthropic-stub.ts'
import { type ClaudeSandbox, claudeEnv, makeClaudeSandbox, runClaude } from './claude-code.ts'
import { bashTurn, HARK, runHark } from './hark-claude.ts'
import {
  answer,
  channel,
  hookEnv,
  nextQuestion,
  openAskIds,
  pinKeys,
  startSignedHark,
} from './signed.ts'

/**
 * The real Claude Code (2.1.330), interactive under a pseudo-terminal (`script`), loading
 * `hark mcp --channel` with `--dangerously-load-development-channels server:hark`, offline. Its
 * debug log says how far the channel gets through its gates (docs/decisions.md "Claude Code
 * channels"): past the capability and protocol-era gates (Hark declares `claude/channel` on a
 * connection that is not "modern"), then stopped by the remote flag and account entitlement an
 * API-key run does not have. When a future version or setting gets past it, this test says so,
 * and the relay can be tested with the real binary.
 */
let box: ClaudeSandbox | undefined
let stub: AnthropicStub | undefined
let proc: ReturnType<typeof Bun.spawn> | undefined

afterEach(() => {
  proc?.kill('SIGKILL')
  stub?.stop()
  box?.cleanup()
})

const quote = (w: string) => `'${w.replace(/'/g, `'\\''`)}'`

describe('real claude, interactive: the channel gates offline', () => {
  test('hark passes the capability and era gates, then the feature flag refuses it', async () => {
    box = makeClaudeSandbox()
    stub = startAnthropicStub([{ text: 'done' }])
    const config = join(box.root, 'mcp.json')
    const hark = {
      type: 'stdio',
      command: HARK.argv[0],
      args: [...HARK.argv.slice(1), 'mcp', '--channel'],
    }
    writeFileSync(config, JSON.stringify({ mcpServers: { hark } }))
    writeFileSync(
      join(box.home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        theme: 'dark',
        projects: { [box.work]: { hasTrustDialogAccepted: true } },
      }),
    )
    const debug = join(box.root, 'debug.log')
    const words = [
      claudeBin(),
      ...['--mcp-config', config, '--debug-file', debug],
      ...['--dangerously-load-development-channels', 'server:hark'],
    ]
    proc = Bun.spawn(['script', '-qfc', `exec ${words.map(quote).join(' ')}`, '/dev/null'], {
      cwd: box.work,
      env: {
        ...claudeEnv(box.home, stub.baseUrl, { HARK_URL: 'http://127.0.0.1:9', HARK_TOKEN: 'x' }),
        TERM: 'xterm-256color',
        COLUMNS: '120',
        LINES: '40',
      },
      stdin: 'pipe',
      stdout: 'pipe',
      stderr: 'ignore',
    })
    // The terminal's output is drained (a full pipe would stall the UI) and not read.
    void new Response(proc.stdout as ReadableStream).arrayBuffer().catch(() => {})
    const line = () =>
      existsSync(debug)
        ? readFileSync(debug, 'utf8')
            .split('\n')
            .find((l) => /MCP server "hark": Channel notifications/.test(l))
        : undefined
    const deadline = Date.now() + 60_000
    // Start-up dialogs ("use this API key?" and the like) wait for a key: Enter takes their
    // default, and on the empty prompt does nothing.
    let ticks = 0
    while (!line() && Date.now() < deadline) {
      if (++ticks % 30 === 0) (proc.stdin as import('bun').FileSink).write('\r')
      await Bun.sleep(100)
    }
    if (!line())
      console.log(existsSync(debug) ? readFileSync(debug, 'utf8').slice(-3000) : 'no debug log')
    expect(line()).toContain(
      'Channel notifications skipped: channels feature is not currently available',
    )
  }, 90_000)
})

describe('real claude -p with hark install claude --channel', () => {
  test('the hooks decide as before, with the channel server loaded: one signed card, the command runs', async () => {
    const h = await startSignedHark()
    box = makeClaudeSandbox()
    try {
      const install = await runHark(box, ['install', 'claude', '--channel'], h.env)
      expect([install.code, install.stderr]).toEqual([0, ''])
      await pinKeys(h, box)
      stub = startAnthropicStub([
        bashTurn('touch made-by-hark && echo hark-ran'),
        { text: 'finished' },
      ])
      const before = await openAskIds(h)
      const debug = join(box.root, 'debug.log')
      const running = runClaude({
        cwd: box.work,
        home: box.home,
        baseUrl: stub.baseUrl,
        args: ['-p', 'do it', '--debug-file', debug],
        env: hookEnv(h),
        timeoutMs: 45_000,
      })
      const card = await nextQuestion(h, before, running)
      await answer(h, card, { decision: 'allow' }, 'signed')
      const run = await running
      expect([run.exitCode, run.timedOut, run.stdout.trim()]).toEqual([0, false, 'finished'])
      expect(existsSync(join(box.work, 'made-by-hark'))).toBe(true)
      // One card for the prompt (in -p Claude Code relays nothing to channels), and the channel
      // server was up.
      const approvals = (await channel(h)).filter((m) => m.body.blocks?.[0]?.type === 'approval')
      expect(approvals.map((m) => m.id)).toEqual([card.id])
      expect(readFileSync(debug, 'utf8')).toMatch(/MCP server "hark": Successfully connected/)
    } finally {
      await h.close()
    }
  }, 90_000)
})
