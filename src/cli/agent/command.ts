import { CliError, EXIT } from '../../agent/failures.ts'
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
/**
 * Under every command's help and the top-level help: a CI job or an agent reads only `hark
 * help`, and needs how to connect without a config file, what --json gives and what each exit
 * code means.
 */
export const GLOBAL_HELP = `Global flags:
  --profile NAME  use another stored connection (default "default", or $HARK_PROFILE)
  --json          print one JSON document on stdout (one per line when streaming);
                  progress, warnings and errors go to stderr, and a failure is also
                  {"error": "...", "exit_code": N} on stdout

Environment (a CI job needs no config file):
  HARK_URL              the server, e.g. https://hark.example.com
  HARK_TOKEN            an agent token, as "hark init" or "hark join" stores it in
                        $XDG_CONFIG_HOME/hark/config.json; both override the profile's
  HARK_REQUEST_TIMEOUT  seconds a request may take (default 30; long-polls add their wait)
  HARK_DEBUG            1: an unexpected error also prints where it happened

Exit codes:
  ${EXIT.ok}    ok
  ${EXIT.error}    error (stderr says what failed)
  ${EXIT.usage}    usage: a bad flag or argument
  ${EXIT.notAuthenticated}    not connected, or the token was refused (401, 403)
  ${EXIT.timeout}  a wait or --timeout ran out (ask, wait: {"id","status":"timeout"} with --json)
  ${EXIT.interrupted}  interrupted (Ctrl-C)`

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
 * the command line gives nothing else to send (`otherContent`: a title, blocks, files, a
 * question's inputs) and stdin is a pipe or a file (`make 2>&1 | tail -20 | hark send`).
 * Anything else never reads stdin: agent harnesses run commands with stdin a pipe they hold
 * open and never write to, which looks the same as a pipe with a writer, and waiting for it
 * hangs the command. A read ends at `deadline` (the command's --timeout) with exit 124.
 */
export async function messageText(
  c: CommandContext,
  words: string[],
  otherContent: boolean,
  deadline = Number.POSITIVE_INFINITY,
): Promise<string | undefined> {
  const fromStdin = async () => (await stdinBy(c.io, deadline)).replace(/\r?\n$/, '')
  if (words.length === 1 && words[0] === '-') return fromStdin()
  if (!otherContent && words.length === 0 && c.io.stdinIsPiped) return fromStdin()
  c.io.stdinUnread = c.io.stdinIsPiped
  return words.length > 0 ? words.join(' ') : undefined
}

/**
 * Time stdin always gets: a closed pipe or a file is read in milliseconds, and this keeps
 * `ask - --timeout 0` (ask, do not wait for the answer) working with the text on stdin.
 */
const STDIN_GRACE_MS = 1000

/** All of stdin, or exit 124 when it is still open at `deadline` (before anything was sent). */
async function stdinBy(io: Io, deadline: number): Promise<string> {
  if (deadline === Number.POSITIVE_INFINITY) return io.readStdin()
  let timer: ReturnType<typeof setTimeout> | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new CliError(
            'stdin was still open when --timeout ran out: nothing was sent (give the text as arguments, or close stdin)',
            EXIT.timeout,
          ),
        ),
      Math.max(STDIN_GRACE_MS, deadline - Date.now()),
    )
  })
  try {
    // The read left pending when the deadline wins ends with the process (main exits).
    return await Promise.race([io.readStdin(), late])
  } finally {
    clearTimeout(timer)
  }
}
