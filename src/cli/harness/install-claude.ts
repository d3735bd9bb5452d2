import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Env } from '../../agent/profiles.ts'
import { type Json, jsonText, readJson, writeAtomic } from './files.ts'

/**
 * `hark install claude`: Hark's hooks and MCP server in Claude Code's settings for one scope,
 * merged with what is there (PRODUCT.md "Agent harnesses"). Ours are recognised by their command
 * (`… hook claude`, `… mcp`), so installing again replaces them and `--remove` takes out only
 * them. Where Claude Code reads each scope:
 *   user     hooks: ~/.claude/settings.json          MCP: ~/.claude.json mcpServers
 *   project  hooks: .claude/settings.json            MCP: .mcp.json mcpServers
 *   local    hooks: .claude/settings.local.json      MCP: ~/.claude.json projects[dir].mcpServers
 * (`CLAUDE_CONFIG_DIR` moves ~/.claude and ~/.claude.json, as it does for Claude Code.)
 */
export type Scope = 'user' | 'project' | 'local'

export interface ClaudeInstall {
  scope: Scope
  /** The project directory (project and local scopes). */
  dir: string
  /** The words that run hark: the binary, or bun and src/main.ts. */
  hark: string[]
  waitSeconds: number
  reply: boolean
  profile?: string
  /** `--allow-unsigned`: the hooks and the approve tool take allows no passkey signed. */
  allowUnsigned?: boolean
  remove: boolean
  /** `--channel`: the MCP server is also a Claude Code channel (\`hark mcp --channel\`). */
  channel?: boolean
}

/** Events Hark answers, with the hook's own time limit (explicit, above the wait). */
const EVENTS = [
  'PermissionRequest',
  'Elicitation',
  'Stop',
  'Notification',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionDenied',
] as const
type EventName = (typeof EVENTS)[number]
/** Events that never wait for the person: a short limit. */
const QUICK: ReadonlySet<EventName> = new Set([
  'Notification',
  'PostToolUse',
  'PostToolUseFailure',
  'PermissionDenied',
])
const QUICK_TIMEOUT_S = 30

export const MCP_NAME = 'hark'

const configHome = (env: Env) => env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), '.claude')
const userState = (env: Env) =>
  env.CLAUDE_CONFIG_DIR
    ? join(env.CLAUDE_CONFIG_DIR, '.claude.json')
    : join(env.HOME || homedir(), '.claude.json')

export function settingsPath(env: Env, scope: Scope, dir: string): string {
  if (scope === 'user') return join(configHome(env), 'settings.json')
  return join(dir, '.claude', scope === 'project' ? 'settings.json' : 'settings.local.json')
}

const quote = (words: string[]) =>
  words.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`))

/** True for a hook command this installer wrote: `<hark> hook claude …`. */
export const isOurHook = (command: unknown) =>
  typeof command === 'string' && /(^|\s)hook\s+claude(\s|$)/.test(command)

function hookCommand(o: ClaudeInstall): string {
  const words = [...o.hark, 'hook', 'claude']
  if (o.profile) words.push('--profile', o.profile)
  if (o.allowUnsigned) words.push('--allow-unsigned')
  return quote(words).join(' ')
}

interface HookGroup {
  matcher?: string
  hooks?: { type?: string; command?: unknown; timeout?: number }[]
}

/** The settings with ours taken out of every event (empty groups and events dropped). */
function withoutOurs(hooks: Record<string, unknown>): Record<string, HookGroup[]> {
  const out: Record<string, HookGroup[]> = {}
  for (const [event, groups] of Object.entries(hooks)) {
    if (!Array.isArray(groups)) {
      out[event] = groups as HookGroup[]
      continue
    }
    const kept = (groups as HookGroup[])
      .map((g) => ({ ...g, hooks: (g.hooks ?? []).filter((h) => !isOurHook(h.command)) }))
      .filter((g, i) => g.hooks.length > 0 || !((groups as HookGroup[])[i]?.hooks ?? []).length)
    if (kept.length > 0) out[event] = kept
  }
  return out
}

function ourGroup(o: ClaudeInstall, event: EventName): HookGroup {
  const base = hookCommand(o)
  const command = event === 'Stop' && o.reply ? `${base} --reply` : base
  const wait = event === 'PermissionRequest' || event === 'Elicitation' || event === 'Stop'
  const full = wait ? `${command} --wait ${o.waitSeconds}` : command
  // Claude Code kills a hook at its timeout: ours is above the wait, so the hook itself gives
  // up first, withdraws its question and lets Claude Code's own prompt take over.
  const timeout = QUICK.has(event) ? QUICK_TIMEOUT_S : o.waitSeconds + 60
  const group: HookGroup = { hooks: [{ type: 'command', command: full, timeout }] }
  if (event !== 'Elicitation' && event !== 'Stop' && event !== 'Notification') group.matcher = '*'
  return group
}

export interface Change {
  path: string
  what: string
}

/** Applies the install (or removal) and returns what changed, file by file. */
export function installClaude(env: Env, o: ClaudeInstall): Change[] {
  const dir = resolve(o.dir)
  const changes: Change[] = []
  const settingsFile = settingsPath(env, o.scope, dir)
  const settings = readJson(settingsFile)
  const hooks = withoutOurs((settings.hooks ?? {}) as Record<string, unknown>)
  if (!o.remove) {
    for (const event of EVENTS) hooks[event] = [...(hooks[event] ?? []), ourGroup(o, event)]
  }
  const next: Json = { ...settings }
  if (Object.keys(hooks).length > 0) next.hooks = hooks
  else delete next.hooks
  record(
    changes,
    settingsFile,
    settings,
    next,
    o.remove ? 'removed hark hooks' : `hooks ${EVENTS.join(', ')}`,
  )

  const mcpFile = o.scope === 'project' ? join(dir, '.mcp.json') : userState(env)
  const state = readJson(mcpFile)
  const server = {
    type: 'stdio',
    command: o.hark[0],
    args: [
      ...o.hark.slice(1),
      'mcp',
      ...(o.channel ? ['--channel'] : []),
      ...(o.profile ? ['--profile', o.profile] : []),
    ],
    env: {
      ...(o.allowUnsigned ? { HARK_ALLOW_UNSIGNED: '1' } : {}),
      // The hooks are installed with it: a prompt their card already put on the phone is not
      // asked twice (src/cli/channel/channel.ts).
      ...(o.channel ? { HARK_CHANNEL_HOOKS: '1' } : {}),
    },
  }
  const nextState = withServer(state, o, dir, o.remove ? undefined : server)
  record(
    changes,
    mcpFile,
    state,
    nextState,
    o.remove
      ? 'removed MCP server "hark"'
      : o.channel
        ? 'MCP server "hark" (a channel: start Claude Code with --dangerously-load-development-channels server:hark)'
        : 'MCP server "hark"',
  )
  return changes
}

/** `state` with our MCP entry set (or removed) where the scope keeps it. */
function withServer(state: Json, o: ClaudeInstall, dir: string, server: Json | undefined): Json {
  const put = (holder: Json): Json => {
    const servers = { ...((holder.mcpServers ?? {}) as Json) }
    if (server) servers[MCP_NAME] = server
    else delete servers[MCP_NAME]
    const out = { ...holder, mcpServers: servers }
    if (Object.keys(servers).length === 0) delete (out as Json).mcpServers
    return out
  }
  if (o.scope !== 'local') return put(state)
  const projects = { ...((state.projects ?? {}) as Json) }
  projects[dir] = put((projects[dir] ?? {}) as Json)
  return { ...state, projects }
}

function record(changes: Change[], path: string, before: Json, after: Json, what: string): void {
  if (JSON.stringify(before) === JSON.stringify(after)) {
    changes.push({ path, what: 'already up to date' })
    return
  }
  writeAtomic(path, jsonText(after))
  changes.push({ path, what })
}
