import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { claudeBin } from './agent-clis'
import { type BoundedRun, runBounded } from './bounded.ts'

/**
 * Runs the real Claude Code CLI (2.1.330) offline against the loopback Messages API stub
 * (anthropic-stub.ts), isolated from the machine's own Claude Code: its own HOME (so
 * `~/.claude.json` and `~/.claude/` are fresh temp files) and an environment built from scratch, so
 * no real API key, login, settings or MCP server can leak in. A fresh HOME needs no onboarding for
 * `-p`: no login, theme or trust prompt.
 */

/** A fresh temp directory for one run: `home` (HOME) and `work` (the project, the cwd). */
export interface ClaudeSandbox {
  root: string
  home: string
  work: string
  cleanup(): void
}

/**
 * Creates the run's directories. Paths are realpath'd: Claude Code keys per-project state in
 * `~/.claude.json` (`projects[path]`) and hook inputs' `cwd` by the real path.
 */
export function makeClaudeSandbox(): ClaudeSandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'hark-claude-')))
  const dirs = { home: join(root, 'home'), work: join(root, 'work') }
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true })
  return { root, ...dirs, cleanup: () => rmSync(root, { recursive: true, force: true }) }
}

/** One command hook, as settings.json holds it; `timeout` is in seconds. */
export interface ClaudeCommandHook {
  command: string
  timeout?: number
}

/** Hook event name → matcher groups, the `hooks` key of a Claude Code settings file. */
export type ClaudeHooks = Record<
  string,
  { matcher?: string; hooks: ({ type: 'command' } & ClaudeCommandHook)[] }[]
>

/** Settings for `hooks`: each event runs the one command (matching every tool). */
export const hooksFor = (events: Record<string, ClaudeCommandHook>): ClaudeHooks =>
  Object.fromEntries(
    Object.entries(events).map(([event, hook]) => [
      event,
      [{ matcher: '*', hooks: [{ type: 'command' as const, ...hook }] }],
    ]),
  )

/**
 * Where each settings scope lives (verified: a hook in any of them runs in `-p`; project and local
 * hooks need no trust prompt there).
 */
export const settingsPath = {
  user: (home: string) => join(home, '.claude', 'settings.json'),
  project: (work: string) => join(work, '.claude', 'settings.json'),
  local: (work: string) => join(work, '.claude', 'settings.local.json'),
}

/** Writes a settings file, creating its folder. */
export function writeSettings(path: string, settings: object) {
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${JSON.stringify(settings, null, 2)}\n`)
  return path
}

/**
 * The environment of a run, from scratch. `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` is what keeps
 * it loopback-only (measured with strace: without it Claude Code resolves telemetry hosts and
 * preconnects to the base URL); the API key is any value, sent as `x-api-key` to the stub.
 */
export function claudeEnv(home: string, baseUrl: string, extra: Record<string, string> = {}) {
  // Hooks are run through a shell and may be bun scripts: keep both reachable.
  const bunDir = dirname(process.execPath)
  const env: Record<string, string> = {
    PATH: `${bunDir}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-stub',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    LANG: 'C.UTF-8',
    ...extra,
  }
  if (!extra.SHELL && existsSync('/bin/bash')) env.SHELL = '/bin/bash'
  return env
}

export interface RunClaudeOptions {
  cwd: string
  home: string
  /** The stub's base URL (`AnthropicStub.baseUrl`). */
  baseUrl: string
  /** Arguments after `claude`, e.g. `['-p', 'run it']`. */
  args: string[]
  /** Extra environment (HARK_URL, …); the rest is built from scratch. */
  env?: Record<string, string>
  /** Written to stdin, then closed (for `--input-format stream-json`); else stdin is /dev/null. */
  stdin?: string
  /** Hard bound on the run; the process is killed after it. */
  timeoutMs?: number
}

export type ClaudeRun = BoundedRun

/**
 * Spawns the real Claude Code binary and waits for it, bounded by `timeoutMs`: with its API
 * unreachable Claude Code retries for minutes, so an unbounded run could hang the suite.
 */
export async function runClaude(options: RunClaudeOptions): Promise<ClaudeRun> {
  return runBounded([claudeBin(), ...options.args], {
    cwd: options.cwd,
    env: claudeEnv(options.home, options.baseUrl, options.env),
    stdin: options.stdin,
    timeoutMs: options.timeoutMs,
  })
}
