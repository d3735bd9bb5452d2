import { UsageError } from '../core/errors.ts'

export interface ParsedArgs {
  positionals: string[]
  flags: Map<string, string | true>
  /** Every value of each valued flag in order, for flags that may repeat (`--block a --block b`). */
  repeated?: Map<string, string[]>
}

/**
 * Parses `--name value`, `--name=value` and boolean `--name` flags. `booleans` lists the flags
 * that take no value; every other flag needs one. Unknown flags are a usage error.
 */
export function parseArgs(
  argv: readonly string[],
  valued: readonly string[],
  booleans: readonly string[] = [],
): ParsedArgs {
  const positionals: string[] = []
  const flags = new Map<string, string | true>()
  const repeated = new Map<string, string[]>()
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1))
      break
    }
    if (!arg.startsWith('--') || arg === '-') {
      positionals.push(arg)
      continue
    }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq === -1 ? undefined : eq)
    if (booleans.includes(name)) {
      if (eq !== -1) throw new UsageError(`--${name} takes no value`)
      flags.set(name, true)
    } else if (valued.includes(name)) {
      const value = eq === -1 ? argv[++i] : arg.slice(eq + 1)
      if (value === undefined) throw new UsageError(`--${name} needs a value`)
      flags.set(name, value)
      repeated.set(name, [...(repeated.get(name) ?? []), value])
    } else {
      throw new UsageError(`unknown flag --${name}`)
    }
  }
  return { positionals, flags, repeated }
}

export function flagString(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name)
  return typeof v === 'string' ? v : undefined
}

/** All values of a repeatable flag, in the order given; empty when it was not given. */
export function flagStrings(args: ParsedArgs, name: string): string[] {
  return args.repeated?.get(name) ?? []
}
