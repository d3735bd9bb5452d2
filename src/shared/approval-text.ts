/**
 * How an approval (PRODUCT.md "Approvals") reads in one line: the push when the agent gave no
 * `summary`, and the app's list of what waits on the person. Both sides read the tool's input
 * the same way, so the lock screen and the app never disagree about what will happen.
 */

/** Tools whose input is a shell command: Claude Code's Bash, Codex's shell and its kin. */
const SHELL_TOOLS = /^(Bash|shell|exec_command|local_shell|container\.exec)$/i

export const isShellTool = (tool: string) => SHELL_TOOLS.test(tool)

const fieldOf = (input: unknown, key: string): unknown =>
  typeof input === 'object' && input !== null && !Array.isArray(input)
    ? (input as Record<string, unknown>)[key]
    : undefined

/** A string field of the input, or undefined. */
export function stringField(input: unknown, key: string): string | undefined {
  const value = fieldOf(input, key)
  return typeof value === 'string' ? value : undefined
}

/**
 * One argv as a shell would read it back: words that need it are quoted, so
 * `['bash', '-lc', 'npm test']` shows as `bash -lc 'npm test'` and not as three loose words.
 * Single quotes unless the word holds one and nothing a shell expands in double quotes.
 */
export function shellJoin(argv: readonly string[]): string {
  return argv.map(shellWord).join(' ')
}

function shellWord(word: string): string {
  if (word !== '' && /^[\w@%+=:,./-]+$/.test(word)) return word
  if (word.includes("'") && !/[$`"\\!]/.test(word)) return `"${word}"`
  return `'${word.replaceAll("'", `'\\''`)}'`
}

/** The command of a shell tool: a string, or Codex's argv. Undefined for any other tool. */
export function commandOf(tool: string, input: unknown): string | undefined {
  if (!isShellTool(tool)) return undefined
  for (const key of ['command', 'cmd']) {
    const value = fieldOf(input, key)
    if (typeof value === 'string') return value
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return shellJoin(value)
  }
  return undefined
}

/** `mcp__github__create_issue` → `github: create_issue`; other names as they are. */
export function toolName(tool: string): string {
  const m = /^mcp__(.+?)__(.+)$/.exec(tool)
  return m ? `${m[1]}: ${m[2]}` : tool
}

const oneLine = (s: string, n: number) => {
  const flat = s.replace(/\s+/g, ' ').trim()
  return flat.length > n ? `${flat.slice(0, n - 1)}…` : flat
}

/** What will happen, in a line: the command, `Edit src/a.ts`, `WebFetch https://…`, the tool. */
export function approvalLine(tool: string, input: unknown, max = 200): string {
  const command = commandOf(tool, input)
  if (command !== undefined) return oneLine(command, max)
  const path = stringField(input, 'file_path') ?? stringField(input, 'notebook_path')
  if (path !== undefined) return oneLine(`${tool} ${path}`, max)
  const url = stringField(input, 'url')
  if (url !== undefined) return oneLine(`${tool} ${url}`, max)
  const query = stringField(input, 'query') ?? stringField(input, 'pattern')
  if (query !== undefined) return oneLine(`${tool}: ${query}`, max)
  return oneLine(toolName(tool), max)
}
