// test-needs: agent-clis
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { type AnthropicStub, startAnthropicStub } from './anthropic-stub.ts'
import {
  type ClaudeSandbox,
  hooksFor,
  makeClaudeSandbox,
  runClaude,
  settingsPath,
  writeSettings,
} from './claude-code.ts'
import { eventually, HARK, runHark } from './hark-claude.ts'
import {
  channel,
  fulfilSecret,
  pinKeys,
  type SignedHark,
  secretRecord,
  startSignedHark,
} from './signed.ts'

/**
 * The real Claude Code (2.1.330, `-p`, offline against the model stub) calling `hark mcp`'s
 * `request_secret`: it declares `elicitation.url`, so Hark offers the request's page through
 * URL-mode elicitation. In `-p` there is no dialog: Claude Code hands an elicitation to its
 * Elicitation hooks (else cancels it), so the person at the terminal is a hook of the test's own
 * that records what it was shown and accepts. The person then enters the secret on the page as
 * the app does (encrypted to the request's key, signed by their passkey, pinned with `hark keys
 * refresh`): `hark mcp` opens it only with that signature, as without elicitation.
 */

let h: SignedHark
let box: ClaudeSandbox
let stub: AnthropicStub | undefined

beforeEach(async () => {
  h = await startSignedHark()
  box = makeClaudeSandbox()
  await pinKeys(h, box)
})
afterEach(async () => {
  stub?.stop()
  box.cleanup()
  await h.close()
})

/** The hark MCP server as a `--mcp-config` file, connected to the signed server. */
function harkMcpConfig(): string {
  const path = join(box.root, 'hark-mcp.json')
  const [command, ...args] = HARK.argv
  const hark = { type: 'stdio', command, args: [...args, 'mcp'], env: h.env }
  writeFileSync(path, JSON.stringify({ mcpServers: { hark } }))
  return path
}

/** An Elicitation hook that writes its input to `elicited.json` and answers `action`. */
function terminalHook(action: 'accept' | 'decline') {
  const script = join(box.root, 'elicitation-hook.ts')
  const out = join(box.root, 'elicited.json')
  writeFileSync(
    script,
    `const input = await new Response(Bun.stdin.stream()).text()
await Bun.write(${JSON.stringify(out)}, input)
console.log(JSON.stringify({ hookSpecificOutput: { hookEventName: 'Elicitation', action: ${JSON.stringify(action)} } }))
`,
  )
  writeSettings(settingsPath.user(box.home), {
    hooks: hooksFor({ Elicitation: { command: `${process.execPath} ${script}`, timeout: 30 } }),
  })
  return out
}

function startClaude(input: Record<string, string | number>, installed = false) {
  stub = startAnthropicStub([
    { tool_use: { name: 'mcp__hark__request_secret', input } },
    { text: 'finished' },
  ])
  return runClaude({
    cwd: box.work,
    home: box.home,
    baseUrl: stub.baseUrl,
    args: [
      '-p',
      'do it',
      ...(installed ? [] : ['--mcp-config', harkMcpConfig()]),
      '--allowedTools',
      'mcp__hark__request_secret',
    ],
    // As installed, the MCP server and the hooks take the connection from the environment.
    env: installed ? h.env : {},
    timeoutMs: 90_000,
  })
}

const record = (id: string) => secretRecord(h, id)

describe('real Claude Code: request_secret through URL-mode elicitation', () => {
  test('accepted: the page is offered, the signed secret entered there reaches the file, the model reads only its path', async () => {
    const elicited = terminalHook('accept')
    const path = join(box.root, 'npm-token')
    const running = startClaude({ name: 'NPM_TOKEN', path, wait_seconds: 40 })
    // The hook's file is read once it holds the whole event: read while the hook writes it, it
    // is empty or cut short (seen once in CI, taken for "no elicitation").
    const event = await eventually(() => {
      try {
        return JSON.parse(readFileSync(elicited, 'utf8')) as Record<string, string>
      } catch {
        return undefined
      }
    }, 60_000)
    if (!event) throw new Error(`no elicitation reached the hook: ${JSON.stringify(await running)}`)
    expect(event).toMatchObject({ hook_event_name: 'Elicitation', mcp_server_name: 'hark' })
    expect(event.mode).toBe('url')
    const r = await record(event.elicitation_id ?? '')
    expect(event.url).toBe(`${h.s.url}/c/${r.channel_id}#${r.message_id}`)
    expect(event.message).toContain(r.fingerprint)

    const secret = `canary-${crypto.randomUUID()}`
    await fulfilSecret(h, r.id, secret)

    const run = await running
    if (run.timedOut || run.exitCode !== 0) throw new Error(`claude failed: ${JSON.stringify(run)}`)
    const result = stub?.toolResult(0)
    expect(result?.isError).toBe(false)
    expect(JSON.parse(result?.content ?? '{}')).toEqual({
      id: r.id,
      status: 'received',
      name: 'NPM_TOKEN',
      path,
    })
    expect(JSON.stringify(stub?.requests)).not.toContain(secret)
    expect(readFileSync(path, 'utf8')).toBe(secret)
  }, 120_000)

  test('declined at the terminal: the request is withdrawn, the model reads why', async () => {
    const elicited = terminalHook('decline')
    const running = startClaude({ name: 'NPM_TOKEN', wait_seconds: 40 })
    const run = await running
    if (run.timedOut || run.exitCode !== 0) throw new Error(`claude failed: ${JSON.stringify(run)}`)
    const event = JSON.parse(readFileSync(elicited, 'utf8')) as Record<string, string>
    const result = JSON.parse(stub?.toolResult(0)?.content ?? '{}')
    expect(result).toEqual({
      id: event.elicitation_id,
      status: 'cancelled',
      reason: 'the person declined at the terminal',
    })
    expect((await record(event.elicitation_id ?? '')).status).toBe('cancelled')
  }, 120_000)

  test("with Hark's hooks installed: the Elicitation hook steps aside (one card, the request's), and the secret still arrives", async () => {
    const install = await runHark(box, ['install', 'claude'], h.env)
    expect([install.code, install.stderr]).toEqual([0, ''])
    const path = join(box.root, 'npm-token')
    const running = startClaude({ name: 'NPM_TOKEN', path, wait_seconds: 40 }, true)
    const card = await eventually(async () =>
      (await channel(h)).find((m) => m.body.blocks?.[0]?.type === 'secret_request'),
    )
    if (!card) throw new Error(`no secret request: ${JSON.stringify(await running)}`)
    const r = await record(String(card.body.blocks?.[0]?.request_id))
    const secret = `canary-${crypto.randomUUID()}`
    await fulfilSecret(h, r.id, secret)
    const run = await running
    if (run.timedOut || run.exitCode !== 0) throw new Error(`claude failed: ${JSON.stringify(run)}`)
    expect(JSON.parse(stub?.toolResult(0)?.content ?? '{}')).toMatchObject({
      status: 'received',
      path,
    })
    expect(readFileSync(path, 'utf8')).toBe(secret)
    // No card linking to the request's own card: the hook left the link to the terminal.
    const titles = (await channel(h)).map((m) => m.body.title ?? '')
    expect(titles.filter((t) => t.includes('open a page'))).toEqual([])
  }, 120_000)
})
