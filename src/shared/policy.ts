import { commandOf, isShellTool, stringField } from './approval-text.ts'
import { canonicalJson } from './canonical.ts'

/**
 * Approval policies (issue: "Fewer prompts, same control"): a rule the person signs on the phone
 * with their passkey, in the same scheme as a signed answer (src/shared/proof.ts): the WebAuthn
 * challenge is SHA-256 of the canonical JSON of the claim. The server stores the claim and its
 * assertion and hands them to the agents the rule names; each agent checks the signature with
 * the keys it pinned and evaluates the rule itself (src/agent/policy.ts). The app, the server
 * and the agent read a rule with this one module, so what the card shows is what the hook does.
 */

/** What a rule matches in an action's input. */
export type PolicyMatch =
  /** A shell command, exactly. The only form a destructive command is ever allowed by. */
  | { kind: 'exact'; command: string }
  /** A shell command that is `prefix` or starts with `prefix` and a space, with no shell
   * operator after it (`npm test; rm -rf ~` is not `npm test …`). */
  | { kind: 'prefix'; command: string }
  /** A file tool's `file_path` / `notebook_path`: `*` within one directory, `**` across. */
  | { kind: 'path'; glob: string }
  /** A fetch's URL host, exactly (lower case). */
  | { kind: 'host'; host: string }
  /** Any input of a tool that is not a shell, file or fetch tool (an MCP tool). */
  | { kind: 'tool' }

/** Where a rule applies: one agent (channel), one directory of one agent, or all the person's. */
export type PolicyWhere =
  | { kind: 'channel'; channel_id: string }
  | { kind: 'cwd'; channel_id: string; cwd: string }
  | { kind: 'all' }

export interface PolicyRule {
  effect: 'allow' | 'deny'
  tool: string
  match: PolicyMatch
  where: PolicyWhere
  /** A deny rule's message, handed to the agent as the person's reason. */
  message?: string
}

/** The claim the person's passkey signs. */
export interface PolicyClaim {
  type: 'hark.policy'
  /** Chosen by the app (`pol_` and random): revocation and replay memory go by it. */
  id: string
  rule: PolicyRule
  /** The app's clock, ms. */
  created_at: number
  expires_at: number
}

/** A revocation, signed too: the server cannot revoke on its own (nor un-revoke: it expires). */
export interface RevocationClaim {
  type: 'hark.policy.revoke'
  policy_id: string
  revoked_at: number
}

/** Every policy expires within this: a server that withholds a revocation delays it, no more. */
export const MAX_POLICY_MS = 30 * 24 * 3600_000

/** The lifetimes the card offers: 1 hour, today (till midnight, app side), 7 days, 30 days. */
export const POLICY_DURATIONS_MS = {
  hour: 3600_000,
  week: 7 * 24 * 3600_000,
  month: MAX_POLICY_MS,
} as const

export const policyText = (claim: PolicyClaim | RevocationClaim) => canonicalJson(claim)

/** A shell operator, redirection or expansion: a command holding one is not a plain prefix. */
const SHELL_OPERATORS = /[;&|<>`$()\n\r\\]|\{|\}/

/**
 * Commands that destroy or publish what cannot be taken back: never generalized (the card
 * proposes the exact command and says why), and a prefix or wider rule never allows one.
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

export const isDangerousCommand = (command: string) => DANGEROUS.some((re) => re.test(command))

/** The path a file tool acts on, if it is one. */
export const pathOf = (input: unknown) =>
  stringField(input, 'file_path') ?? stringField(input, 'notebook_path')

/** The host of a fetch's URL, lower case, if it is one. */
export function hostOf(input: unknown): string | undefined {
  const url = stringField(input, 'url')
  if (url === undefined) return undefined
  try {
    return new URL(url).hostname.toLowerCase() || undefined
  } catch {
    return undefined
  }
}

/** `*` within a path segment, `**` across segments; nothing else is special. */
export function globMatches(glob: string, path: string): boolean {
  // A path that climbs (`/repo/../etc`) could leave the directory the glob names.
  if (path.split('/').includes('..')) return false
  let re = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*'
      i++
    } else if (c === '*') re += '[^/]*'
    else re += c.replace(/[.+?^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${re}$`).test(path)
}

/** The tool names one rule covers: a shell rule covers every harness's shell tool. */
const sameTool = (rule: string, tool: string) =>
  rule === tool || (isShellTool(rule) && isShellTool(tool))

/** Whether `rule`'s match covers the action (not where it applies: see `applies`). */
export function matches(rule: PolicyRule, action: { tool: string; input: unknown }): boolean {
  if (!sameTool(rule.tool, action.tool)) return false
  const m = rule.match
  const command = commandOf(action.tool, action.input)
  switch (m.kind) {
    case 'exact':
      return command !== undefined && command === m.command
    case 'prefix': {
      if (command === undefined) return false
      if (command !== m.command && !command.startsWith(`${m.command} `)) return false
      if (SHELL_OPERATORS.test(command)) return false
      // A deny may be wide; an allow of a destructive command must be exact.
      return rule.effect === 'deny' || !isDangerousCommand(command)
    }
    case 'path': {
      const path = pathOf(action.input)
      return path !== undefined && globMatches(m.glob, path)
    }
    case 'host':
      return hostOf(action.input) === m.host
    case 'tool':
      return command === undefined && pathOf(action.input) === undefined
    default:
      return false
  }
}

/** Whether `rule` applies to an agent on `channelId` working in `cwd`. */
export function applies(rule: PolicyRule, channelId: string, cwd: string | undefined): boolean {
  const w = rule.where
  if (w.kind === 'all') return true
  if (w.channel_id !== channelId) return false
  if (w.kind === 'channel') return true
  if (cwd === undefined || cwd.split('/').includes('..')) return false
  const base = w.cwd.replace(/\/+$/, '')
  return cwd === base || cwd.startsWith(`${base}/`)
}

/** The rule in words, as the card, the Policies screen and the thread's quiet line say it. */
export function ruleText(rule: PolicyRule): string {
  const verb = rule.effect === 'allow' ? 'Allow' : 'Never allow'
  const m = rule.match
  const what =
    m.kind === 'exact'
      ? `${rule.tool} \`${m.command}\` (exactly)`
      : m.kind === 'prefix'
        ? `${rule.tool} commands starting \`${m.command}\``
        : m.kind === 'path'
          ? `${rule.tool} on ${m.glob}`
          : m.kind === 'host'
            ? `${rule.tool} of ${m.host}`
            : `every use of ${rule.tool}`
  const where =
    rule.where.kind === 'all'
      ? 'for all my agents'
      : rule.where.kind === 'cwd'
        ? `in ${rule.where.cwd}`
        : 'for this agent'
  return `${verb} ${what} ${where}`
}

/**
 * The rule the card proposes for an action: as wide as is safe (a command's first two words,
 * a file's directory, a URL's host), never wider than the exact command for a destructive one.
 */
export function proposedMatch(tool: string, input: unknown): PolicyMatch {
  const command = commandOf(tool, input)
  if (command !== undefined) {
    if (isDangerousCommand(command) || SHELL_OPERATORS.test(command)) {
      return { kind: 'exact', command }
    }
    const words = command.trim().split(/\s+/)
    return { kind: 'prefix', command: words.slice(0, Math.min(2, words.length)).join(' ') }
  }
  const path = pathOf(input)
  if (path !== undefined) {
    const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '.'
    return { kind: 'path', glob: `${dir}/**` }
  }
  const host = hostOf(input)
  if (host !== undefined) return { kind: 'host', host }
  return { kind: 'tool' }
}

/** Why a destructive command's proposal is exact: the card says it. */
export const NEVER_GENERALIZED =
  'This command can destroy or publish what cannot be taken back, so the rule is for this exact command only.'
