import type { Env } from '../../agent/profiles.ts'
import { openSession, type Session } from '../../agent/session.ts'
import { UsageError } from '../../core/errors.ts'
import type { ParsedArgs } from '../args.ts'
import type { Command } from '../command.ts'
import type { Io } from './io.ts'

/** One agent command: its `help` is the whole of `hark help NAME`, from its usage line on. */
export type AgentCommand = Command<CommandContext>

export interface CommandContext {
  args: ParsedArgs
  io: Io
  env: Env
  profile: string
  /** The connected client of the profile (exit 4 when there is none). */
  session(): Session
}

/** Flags every agent command takes. */
export const GLOBAL_VALUED = ['profile'] as const
export const GLOBAL_BOOLEANS = ['json', 'help'] as const
export const GLOBAL_HELP = `Global flags:
  --profile NAME  use another stored connection (default "default", or $HARK_PROFILE)
  --json          print one JSON document on stdout (one per line when streaming)`

export function contextFor(args: ParsedArgs, io: Io, env: Env, profile: string): CommandContext {
  let session: Session | undefined
  return {
    args,
    io,
    env,
    profile,
    session: () => {
      session ??= openSession(env, profile, io.note)
      return session
    },
  }
}

/** The positional arguments, checked against how many the command takes. */
export function positionals(c: CommandContext, min: number, max: number, usage: string): string[] {
  const p = c.args.positionals
  if (p.length < min) throw new UsageError(`missing arguments\nUsage: ${usage}`)
  if (p.length > max) throw new UsageError(`too many arguments ("${p[max]}")\nUsage: ${usage}`)
  return p
}

/** A duration flag in seconds → milliseconds; undefined when not given. */
export function secondsFlag(args: ParsedArgs, name: string): number | undefined {
  const raw = args.flags.get(name)
  if (raw === undefined) return undefined
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : Number.NaN
  if (!Number.isFinite(n) || n < 0) {
    throw new UsageError(`--${name} must be a number of seconds (got "${raw}")`)
  }
  return n * 1000
}

/**
 * The message text: the arguments joined; or stdin when the only argument is `-`; or stdin when
 * there are no arguments, no other content (`otherContent`: blocks, files) and stdin is a pipe
 * or a file (`make 2>&1 | tail | hark send --title Log`). A terminal or /dev/null is never read,
 * so an agent's command with nothing on stdin does not hang.
 */
export async function messageText(
  c: CommandContext,
  words: string[],
  otherContent: boolean,
): Promise<string | undefined> {
  const fromStdin = async () => (await c.io.readStdin()).replace(/\r?\n$/, '')
  if (words.length === 1 && words[0] === '-') return fromStdin()
  if (words.length > 0) return words.join(' ')
  if (!otherContent && c.io.stdinIsPiped) return fromStdin()
  return undefined
}
