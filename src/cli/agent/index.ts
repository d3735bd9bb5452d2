import { describeFailure, EXIT } from '../../agent/failures.ts'
import { profileName } from '../../agent/session.ts'
import { UsageError } from '../../core/errors.ts'
import { flagString } from '../args.ts'
import { parseFor } from '../command.ts'
import {
  type AgentCommand,
  contextFor,
  GLOBAL_BOOLEANS,
  GLOBAL_HELP,
  GLOBAL_VALUED,
} from './command.ts'
import { ask, cancel, wait } from './commands/asks.ts'
import { rename, status } from './commands/channel.ts'
import { init, join, logout } from './commands/connect.ts'
import { download, upload } from './commands/files.ts'
import { ack, inbox } from './commands/inbox.ts'
import { keys } from './commands/keys.ts'
import { edit, rm, send } from './commands/messages.ts'
import { pin, pins, progress, unpin } from './commands/pins.ts'
import { run } from './commands/run.ts'
import { secret } from './commands/secret.ts'
import { processIo, stdinHasData } from './io.ts'

/**
 * The agent's side of `hark`: connecting (init, join), talking to the person (send, ask, inbox,
 * ...), and `hark mcp`, the same as an MCP server. `src/main.ts` routes these names here.
 */
const mcp: AgentCommand = {
  name: 'mcp',
  summary: 'run as an MCP server on stdio (for Claude Code and other MCP clients)',
  help: `Usage: hark mcp [--channel]

Runs an MCP server on stdin/stdout with the tools notify, ask, wait_for_answer, cancel,
read_messages, acknowledge, pin, unpin, progress, upload and request_secret, using the profile's connection
(or HARK_URL and HARK_TOKEN). Claude Code: claude mcp add hark -- hark mcp

  --channel  also a Claude Code channel (research preview): what you write to the agent in
             Hark reaches the running session, and its permission prompts come to your phone
             (your passkey-signed allow is checked here before it is relayed). Claude Code
             loads it only when started with --channels server:hark (or, for a server not on
             Anthropic's allowlist, --dangerously-load-development-channels server:hark).`,
  booleans: ['channel'],
  async run(c) {
    const { runMcpServer } = await import('../mcp/server.ts')
    await runMcpServer(c.session(), c.env, { channel: c.args.flags.has('channel') })
    return 0
  },
}

const COMMANDS: readonly AgentCommand[] = [
  init,
  join,
  status,
  logout,
  send,
  ask,
  wait,
  cancel,
  inbox,
  ack,
  edit,
  rm,
  pin,
  unpin,
  pins,
  progress,
  upload,
  download,
  secret,
  run,
  rename,
  keys,
  mcp,
]
const byName = new Map(COMMANDS.map((c) => [c.name, c]))

export { GLOBAL_HELP } from './command.ts'

/** The agent commands, one line each, for the top-level help. */
export const AGENT_COMMANDS_HELP = COMMANDS.map(
  (c) => `  hark ${c.name.padEnd(10)} ${c.summary}`,
).join('\n')

const AGENT_HELP = `Agent commands:
${AGENT_COMMANDS_HELP}

${GLOBAL_HELP}

Run "hark help COMMAND" (or "hark COMMAND --help") for a command's flags.`

/** Every registered command, by name: test/cli/names.test.ts holds it equal to names.ts. */
export const REGISTERED_NAMES: readonly string[] = COMMANDS.map((c) => c.name)

const helpOf = (c: AgentCommand) => `${c.help}\n\n${GLOBAL_HELP}`

/** Runs an agent command; never throws: failures are printed and become the exit code. */
export async function runAgentCli(command: string, rest: readonly string[]): Promise<number> {
  const env = process.env
  // Ctrl-C during a wait is an ordinary way to stop: exit 130, as shells expect.
  process.once('SIGINT', () => process.exit(EXIT.interrupted))
  // Whatever follows "--" belongs to a command `hark secret` runs, not to hark.
  const own = rest.includes('--') ? rest.slice(0, rest.indexOf('--')) : rest
  const json = own.includes('--json')
  const io = processIo(json, env)
  try {
    if (command === 'help') {
      const target = byName.get(rest[0] ?? '')
      process.stdout.write(`${target ? helpOf(target) : AGENT_HELP}\n`)
      return EXIT.ok
    }
    const cmd = byName.get(command)
    if (!cmd) throw new UsageError(`unknown command "${command}"\n\n${AGENT_HELP}`)
    if (own.includes('--help') || own.includes('-h')) {
      process.stdout.write(`${helpOf(cmd)}\n`)
      return EXIT.ok
    }
    const args = parseFor(cmd, rest, GLOBAL_VALUED, GLOBAL_BOOLEANS)
    const profile = profileName(flagString(args, 'profile'), env)
    return (await cmd.run(contextFor(args, io, env, profile))) ?? EXIT.ok
  } catch (error) {
    const failure = describeFailure(error)
    const hint =
      failure.exitCode === EXIT.usage && byName.has(command) ? ` (see "hark help ${command}")` : ''
    io.note(`${failure.message}${hint}`)
    // A script that asked for JSON reads stdout: the failure is there too, as one document.
    if (json) io.result({ error: `${failure.message}${hint}`, exit_code: failure.exitCode })
    // One line for whoever runs hark (often a model); where a bug happened is for its report.
    if (failure.detail && env.HARK_DEBUG) io.tell(failure.detail)
    return failure.exitCode
  } finally {
    // Looked at last, so that a writer still running when the command started had its time.
    if (io.stdinUnread && stdinHasData()) {
      io.note(
        `stdin was not read: the text came from the command line; pass "-" to send stdin (... | hark ${command} - ...)`,
      )
    }
  }
}
