import { UsageError } from '../../core/errors.ts'
import { parseFor } from '../command.ts'
import { dataDirFrom } from '../settings.ts'
import { auditExport, auditVerify } from './audit.ts'
import { type AdminCommand, refuseForeignRoot } from './command.ts'
import {
  backupCommand,
  channelAdd,
  restoreCommand,
  tokenAdd,
  userAdd,
  userLink,
  vapidRotate,
} from './commands.ts'
import { migrateTo } from './migrate-to.ts'

/** `hark admin ...`: the operator's commands, in the order `hark admin --help` lists them. */
const COMMANDS: readonly AdminCommand[] = [
  userAdd,
  userLink,
  channelAdd,
  tokenAdd,
  backupCommand,
  restoreCommand,
  migrateTo,
  vapidRotate,
  auditVerify,
  auditExport,
]

/** A command's entry in the list: its usage line, and what it does indented below. */
const listing = (c: AdminCommand) =>
  [`  ${c.help}`, ...(c.summary === '' ? [] : c.summary.split('\n').map((l) => `      ${l}`))].join(
    '\n',
  )

export const ADMIN_HELP = `Operator commands; they work on the data directory directly and are safe while
the server runs.

${COMMANDS.map(listing).join('\n')}

--data defaults to $HARK_DATA, else HARK_DATA in the config file (--config FILE, $HARK_CONFIG,
else /etc/hark/hark.env if it exists), else ./data. A directory without the server's database
is refused; only user add makes one (a new instance's first person, before its first start),
and only where --data, HARK_DATA or the config file names it. On an installed server run these
as the service's user: sudo -u hark hark admin ...`

/** The command whose name's words begin `argv` (`backup FILE`, `user add EMAIL`). */
const commandOf = (argv: readonly string[]) =>
  COMMANDS.find((c) => c.name.split(' ').every((word, i) => argv[i] === word))

/** Runs `hark admin ...`; returns the exit code. Failures are thrown, for `hark` to report. */
export async function admin(
  argv: string[],
  env: Record<string, string | undefined>,
  out: (line: string) => void,
): Promise<number> {
  const command = commandOf(argv)
  if (!command) {
    const [noun, verb] = argv
    throw new UsageError(
      `unknown admin command "${`${noun ?? ''} ${verb ?? ''}`.trim()}"\n\n${ADMIN_HELP}`,
    )
  }
  const args = parseFor(command, argv.slice(command.name.split(' ').length))
  const data = dataDirFrom(args, env)
  refuseForeignRoot(data.value)
  return (await command.run({ args, env, out, dataDir: data.value, dataNamed: data.named })) ?? 0
}
