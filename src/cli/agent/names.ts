/**
 * The agent commands' names, apart from the commands themselves: `src/main.ts` routes a command
 * line with this set alone, so `hark --version`, `hark hook` and `hark serve` never evaluate the
 * agent commands' modules (every module a compiled binary imports statically runs at its start).
 * test/cli/names.test.ts holds it equal to the commands `index.ts` registers.
 */
export const AGENT_COMMAND_NAMES: ReadonlySet<string> = new Set([
  'init',
  'join',
  'status',
  'logout',
  'send',
  'ask',
  'wait',
  'cancel',
  'inbox',
  'ack',
  'edit',
  'rm',
  'pin',
  'unpin',
  'pins',
  'progress',
  'upload',
  'download',
  'secret',
  'run',
  'rename',
  'keys',
  'mcp',
])

/** True for the names the agent CLI answers: its commands, and `help` about one of them. */
export function isAgentCommand(command: string | undefined, rest: readonly string[]): boolean {
  if (command === undefined) return false
  if (command === 'help') return rest[0] !== undefined && AGENT_COMMAND_NAMES.has(rest[0])
  return AGENT_COMMAND_NAMES.has(command)
}
