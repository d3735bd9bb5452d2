import { type ParsedArgs, parseArgs } from './args.ts'

/**
 * One command of `hark`, an agent's (`hark send`) or an operator's (`hark admin backup`) alike:
 * its name, its help, the flags it takes and what it does. `Context` is what its front end
 * hands it: the agent's connection, or the operator's data directory.
 */
export interface Command<Context> {
  /** One word (`send`), or two for an operator's noun and verb (`user add`). */
  name: string
  /** What it does, for the command list (a line, two at most). */
  summary: string
  /** Its usage line, and for an agent command the rest of `hark help NAME`. */
  help: string
  valued?: readonly string[]
  booleans?: readonly string[]
  /** Resolves to the exit code (0 when nothing is returned). */
  run(c: Context): Promise<number | undefined>
}

/** The arguments after a command's name, read with its flags and those every command takes. */
export function parseFor(
  command: Command<unknown>,
  argv: readonly string[],
  globalValued: readonly string[] = [],
  globalBooleans: readonly string[] = [],
): ParsedArgs {
  return parseArgs(
    argv,
    [...(command.valued ?? []), ...globalValued],
    [...(command.booleans ?? []), ...globalBooleans],
  )
}
