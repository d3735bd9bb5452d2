import type { Block } from '../messages/schema.ts'
import { approvalLine, commandOf as shellCommand, toolName } from '../shared/approval-text.ts'
import { isDangerousCommand } from '../shared/policy.ts'

/**
 * An action a coding agent asks to be allowed (a tool and its input), as the person reads it on
 * a lock screen: a one-line summary, a title, and whether it looks destructive. Shared by
 * `hark hook claude`, `hark hook codex` and the MCP `approve` tool, so one action reads the same
 * whichever harness asked.
 */
export interface Action {
  /** The harness's tool name: `Bash`, `Edit`, `mcp__github__create_issue`, `shell`. */
  tool: string
  input: unknown
  cwd?: string
  session?: string
  /** True when the harness can remember an allow for the rest of its session. */
  sessionScope?: boolean
  /** What "Allow for this session" makes it remember, in words (see suggestionText). */
  sessionRules?: string[]
  /** Who asks, for the title: "Claude Code", "Codex". */
  agent: string
}

/** The command of a shell-like tool (Claude Code's Bash, Codex's shell), if it is one. */
export const commandOf = (action: Pick<Action, 'tool' | 'input'>): string | undefined =>
  shellCommand(action.tool, action.input)

/** The line a notification shows: what exactly will happen (the app reads it the same way). */
export const summaryOf = (action: Pick<Action, 'tool' | 'input'>): string =>
  approvalLine(action.tool, action.input)

/** "Claude Code wants to run a command", and the like. */
export function titleOf(action: Pick<Action, 'tool' | 'agent' | 'input'>): string {
  const verb =
    commandOf(action) !== undefined
      ? 'run a command'
      : /^(Edit|MultiEdit|NotebookEdit)$/.test(action.tool)
        ? 'edit a file'
        : action.tool === 'Write'
          ? 'write a file'
          : action.tool === 'WebFetch'
            ? 'fetch a web page'
            : `use ${toolName(action.tool)}`
  return `${action.agent} wants to ${verb}`
}

/** A destructive command (the danger list, src/shared/policy.ts): shown red, never generalized. */
export function isDangerous(action: Pick<Action, 'tool' | 'input'>): boolean {
  const command = commandOf(action)
  return command !== undefined && isDangerousCommand(command)
}

/** The approval input block of an action (PRODUCT.md "Approvals"); its input kept verbatim. */
export function approvalBlock(action: Action): Block {
  const block: Block = {
    type: 'approval',
    id: 'approval',
    tool: action.tool,
    input: action.input ?? null,
    summary: summaryOf(action),
    scopes: action.sessionScope ? ['once', 'session'] : ['once'],
  }
  if (action.sessionScope && action.sessionRules?.length) {
    block.session_rules = action.sessionRules
  }
  if (action.cwd) block.cwd = action.cwd
  if (action.session) block.session = action.session
  if (isDangerous(action)) block.danger = true
  return block
}

/**
 * One of Claude Code's `permission_suggestions` in words, as its own settings write them:
 * `Bash(npm test:*)`, `mode acceptEdits`, `directory /tmp/x`. "Allow for this session" applies
 * exactly these, so the card shows them before the tap.
 */
export function suggestionText(suggestion: unknown): string {
  const s = (suggestion ?? {}) as {
    type?: unknown
    rules?: { toolName?: unknown; ruleContent?: unknown }[]
    mode?: unknown
    directories?: unknown[]
  }
  if (s.type === 'addRules' || s.type === 'replaceRules') {
    return (Array.isArray(s.rules) ? s.rules : [])
      .map((r) =>
        r.ruleContent ? `${String(r.toolName)}(${String(r.ruleContent)})` : String(r.toolName),
      )
      .join(', ')
  }
  if (s.type === 'setMode') return `mode ${String(s.mode)}`
  if (s.type === 'addDirectories' && Array.isArray(s.directories)) {
    return `directory ${s.directories.map(String).join(', ')}`
  }
  return String(s.type ?? 'a permission change').slice(0, 200)
}
