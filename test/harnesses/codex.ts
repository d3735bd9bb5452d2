import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { codexBin } from './agent-clis'
import { type BoundedRun, runBounded } from './bounded.ts'

/**
 * Runs the real Codex CLI (@openai/codex 0.169.0) offline against the loopback model stub
 * (openai-stub.ts), isolated from the machine's own Codex: its own CODEX_HOME and HOME, and an
 * environment built from scratch, so no real API key, login or user config can leak in.
 */

/**
 * The config.toml that points Codex at the stub and switches off everything that would reach the
 * network or outlive the run (measured with strace: with `plugins` on, Codex resolves
 * api.github.com and chatgpt.com at startup; with these settings it only connects to loopback).
 */
export const stubProviderConfig = (baseUrl: string) => `model = "stub-model"
model_provider = "stub"
check_for_update_on_startup = false

[model_providers.stub]
name = "stub"
base_url = "${baseUrl}"
# 0.169.0 rejects "chat": the Responses API is the only wire protocol.
wire_api = "responses"
env_key = "CODEX_STUB_API_KEY"
# A failing stub should fail the run at once, not after ~24 s of reconnect backoff.
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
daemon_auto_start = false
plugins = false
apps = false
`

/** A fresh temp directory for one run: `home`, `codex` (CODEX_HOME) and `work` (the cwd). */
export interface CodexSandbox {
  root: string
  home: string
  codexHome: string
  work: string
  cleanup(): void
}

/**
 * Creates the run's directories. Paths are realpath'd: Codex keys hook trust by the real path of
 * the file declaring the hook, so a symlinked tmpdir would otherwise break trust entries.
 */
export function makeCodexSandbox(): CodexSandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'hark-codex-')))
  const dirs = {
    home: join(root, 'home'),
    codexHome: join(root, 'codex'),
    work: join(root, 'work'),
  }
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true })
  return { root, ...dirs, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

/** What a test adds to the stub config: a `notify` command, and TOML tables (hooks). */
export interface CodexConfigExtras {
  /** Top-level `notify` argv; Codex appends the event JSON as the last argument. */
  notify?: string[]
  /** Appended after the provider config: tables only (a bare key would land in `[features]`). */
  tables?: string
}

/** Writes `$CODEX_HOME/config.toml`: the stub provider plus the extras. */
export function writeCodexConfig(
  codexHome: string,
  baseUrl: string,
  extras: CodexConfigExtras = {},
) {
  const path = join(codexHome, 'config.toml')
  mkdirSync(dirname(path), { recursive: true })
  // Top-level keys must precede the first table header, so `notify` goes first.
  const notify = extras.notify ? `notify = ${JSON.stringify(extras.notify)}\n` : ''
  writeFileSync(path, `${notify}${stubProviderConfig(baseUrl)}\n${extras.tables ?? ''}`)
  return path
}

/** Sorts object keys recursively: Codex hashes the canonical (sorted, compact) JSON. */
const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([key, inner]) => [key, canonical(inner)]),
    )
  }
  return value
}

/** One command hook as written in config.toml / hooks.json. */
export interface CodexCommandHook {
  command: string
  timeout?: number
  statusMessage?: string
}

/**
 * The `trusted_hash` Codex 0.169.0 expects for a matcher group holding one command hook (measured:
 * a wrong hash makes `codex exec` skip the hook silently). SHA-256 over the canonical JSON of
 * `{event_name, matcher?, hooks: [{type, command, timeout (default 600), async: false,
 * statusMessage?}]}`, with the event in snake_case (`permission_request`).
 */
export function codexHookTrustHash(eventSnake: string, hook: CodexCommandHook, matcher?: string) {
  const handler: Record<string, unknown> = {
    type: 'command',
    command: hook.command,
    timeout: hook.timeout ?? 600,
    async: false,
  }
  if (hook.statusMessage !== undefined) handler.statusMessage = hook.statusMessage
  const identity: Record<string, unknown> = { event_name: eventSnake, hooks: [handler] }
  if (matcher !== undefined) identity.matcher = matcher
  const digest = new Bun.CryptoHasher('sha256').update(JSON.stringify(canonical(identity)))
  return `sha256:${digest.digest('hex')}`
}

/**
 * TOML declaring one trusted PermissionRequest command hook in `$CODEX_HOME/config.toml` (group 0,
 * handler 0), the way an installer must leave it so Codex runs it without
 * `--dangerously-bypass-hook-trust`.
 */
export function trustedPermissionHookToml(codexHome: string, hook: CodexCommandHook) {
  const key = `${join(realpathSync(codexHome), 'config.toml')}:permission_request:0:0`
  const lines = [
    '[[hooks.PermissionRequest]]',
    '[[hooks.PermissionRequest.hooks]]',
    'type = "command"',
    `command = ${JSON.stringify(hook.command)}`,
  ]
  if (hook.timeout !== undefined) lines.push(`timeout = ${hook.timeout}`)
  if (hook.statusMessage !== undefined)
    lines.push(`statusMessage = ${JSON.stringify(hook.statusMessage)}`)
  lines.push(
    `[hooks.state.${JSON.stringify(key)}]`,
    `trusted_hash = ${JSON.stringify(codexHookTrustHash('permission_request', hook))}`,
  )
  return `${lines.join('\n')}\n`
}

export interface RunCodexOptions {
  cwd: string
  codexHome: string
  home: string
  /** Arguments after `codex`, e.g. `['exec', '--skip-git-repo-check', '--approve-for-me', 'go']`. */
  args: string[]
  /** Extra environment (HARK_URL, …); the rest is built from scratch. */
  env?: Record<string, string>
  /** Hard bound on the run; the process is killed after it. */
  timeoutMs?: number
}

export type CodexRun = BoundedRun

/**
 * Spawns the real Codex binary and waits for it, bounded by `timeoutMs`. stdin is /dev/null:
 * `codex exec` otherwise waits to read extra prompt text from it.
 */
export async function runCodex(options: RunCodexOptions): Promise<CodexRun> {
  // The npm launcher is a `#!/usr/bin/env node` script: keep node (and sh, for hooks) reachable.
  const node = Bun.which('node')
  if (!node) throw new Error('node is not on PATH: the Codex npm launcher needs it')
  const env: Record<string, string> = {
    PATH: `${dirname(node)}:/usr/local/bin:/usr/bin:/bin`,
    HOME: options.home,
    CODEX_HOME: options.codexHome,
    CODEX_STUB_API_KEY: 'stub-key',
    LANG: 'C.UTF-8',
    ...options.env,
  }
  return runBounded([codexBin(), ...options.args], {
    cwd: options.cwd,
    env,
    timeoutMs: options.timeoutMs,
  })
}

/** A model turn that asks to run outside the sandbox: `--approve-for-me` routes it to the hook. */
export const escalatedWrite = {
  type: 'exec',
  cmd: 'echo hello > out.txt && echo wrote',
  justification: 'Write out.txt?',
  sandboxPermissions: 'require_escalated',
} as const
