import type { Block } from '../../messages/schema.ts'

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
  /** Who asks, for the title: "Claude Code", "Codex". */
  agent: string
}

const SUMMARY_CHARS = 200

const oneLine = (s: string, n = SUMMARY_CHARS) => {
  const flat = s.replace(/\s+/g, ' ').trim()
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat
}

const field = (input: unknown, key: string): string | undefined => {
  if (typeof input !== 'object' || input === null) return undefined
  const value = (input as Record<string, unknown>)[key]
  if (typeof value === 'string') return value
  // Codex's shell tool sends its command as argv.
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(' ')
  return undefined
}

/** The command of a shell-like tool (Claude Code's Bash, Codex's shell), if it is one. */
export const commandOf = (action: Pick<Action, 'tool' | 'input'>): string | undefined =>
  /^(Bash|shell|exec_command|local_shell|container\.exec)$/i.test(action.tool)
    ? (field(action.input, 'command') ?? field(action.input, 'cmd'))
    : undefined

/** `mcp__github__create_issue` → `github: create_issue`. */
const mcpName = (tool: string) => {
  const m = /^mcp__(.+?)__(.+)$/.exec(tool)
  return m ? `${m[1]}: ${m[2]}` : undefined
}

/** The line a notification shows: what exactly will happen. */
export function summaryOf(action: Pick<Action, 'tool' | 'input'>): string {
  const command = commandOf(action)
  if (command !== undefined) return oneLine(command)
  const path = field(action.input, 'file_path') ?? field(action.input, 'notebook_path')
  if (path !== undefined) return oneLine(`${action.tool} ${path}`)
  const url = field(action.input, 'url')
  if (url !== undefined) return oneLine(`${action.tool} ${url}`)
  const query = field(action.input, 'query') ?? field(action.input, 'pattern')
  if (query !== undefined) return oneLine(`${action.tool}: ${query}`)
  return oneLine(mcpName(action.tool) ?? action.tool)
}

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
            : `use ${mcpName(action.tool) ?? action.tool}`
  return `${action.agent} wants to ${verb}`
}

/**
 * Commands that destroy or publish what cannot be taken back. Only a hint for how the card looks
 * (red, nothing pre-selected): every action waits for the person either way.
 */
const DANGEROUS = [
  /\brm\s+(-\w*\s+)*-\w*[rf]/,
  /\bsudo\b/,
  /\bgit\s+push\b.*(--force\b|\s-f\b|--delete\b|\s:)/,
  /\bgit\s+(reset\s+--hard|clean\s+-\w*f|branch\s+-D)/,
  /\b(mkfs|shred|wipefs)\b/,
  /\bdd\s+.*\bof=/,
  /\bchmod\s+(-R\s+)?0?777\b/,
  /\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z)?sh\b/,
  /\b(drop|truncate)\s+(table|database)\b/i,
  /\bkubectl\s+delete\b|\bterraform\s+(destroy|apply)\b/,
  /\bnpm\s+publish\b/,
]

export function isDangerous(action: Pick<Action, 'tool' | 'input'>): boolean {
  const command = commandOf(action)
  return command !== undefined && DANGEROUS.some((re) => re.test(command))
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
  if (action.cwd) block.cwd = action.cwd
  if (action.session) block.session = action.session
  if (isDangerous(action)) block.danger = true
  return block
}
