import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs'
import type { Env } from '../../agent/profiles.ts'

/**
 * What a command prints, and where: results on stdout (human text, or with `--json` exactly one
 * JSON document, one per line when streaming); progress, retries and errors on stderr.
 */
export interface Io {
  json: boolean
  env: Env
  /** The command's result: `data` as JSON with `--json`, else the human text (if any). */
  result(data: unknown, human?: string): void
  /** One item of a stream: a JSON line with `--json`, else the human line. */
  item(data: unknown, human: string): void
  /** A progress or warning line on stderr, after `hark: `. */
  note(line: string): void
  /** Text on stderr as it is (instructions for the person at the keyboard). */
  tell(text: string): void
  /** Everything on stdin, when the command reads its text from there. */
  readStdin(): Promise<string>
  /** True when stdin is a pipe or a file (not a terminal, not /dev/null). */
  stdinIsPiped: boolean
  /**
   * Set when the command left a piped stdin unread (its text came from elsewhere): at its end
   * the CLI says so if data was waiting there (`make | hark send --title Log`).
   */
  stdinUnread: boolean
}

export function processIo(json: boolean, env: Env): Io {
  const out = (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
  const io: Io = {
    json,
    env,
    result(data, human) {
      if (json) out(JSON.stringify(data))
      else if (human !== undefined && human !== '') out(human)
    },
    item(data, human) {
      out(json ? JSON.stringify(data) : human)
    },
    note(line) {
      process.stderr.write(`hark: ${line}\n`)
    },
    tell(text) {
      process.stderr.write(text.endsWith('\n') ? text : `${text}\n`)
    },
    readStdin: () => {
      io.stdinUnread = false
      return Bun.stdin.text()
    },
    stdinIsPiped: isPiped(0),
    stdinUnread: false,
  }
  return io
}

/**
 * Whether stdin holds data now, without waiting for any: a file that is not empty, or a pipe
 * with bytes in it. A pipe is opened again without blocking (Linux's /proc/self/fd/0 gives a
 * description of its own), so a pipe a harness holds open and never writes to answers false at
 * once. Elsewhere, or for a socket, false: the hint this serves is not worth a wait.
 */
export function stdinHasData(): boolean {
  try {
    const stat = fstatSync(0)
    if (stat.isFile()) return stat.size > 0
    if (!stat.isFIFO()) return false
    const fd = openSync('/proc/self/fd/0', constants.O_RDONLY | constants.O_NONBLOCK)
    try {
      return readSync(fd, Buffer.alloc(1)) > 0
    } finally {
      closeSync(fd)
    }
  } catch {
    return false
  }
}

function isPiped(fd: number): boolean {
  try {
    const stat = fstatSync(fd)
    return stat.isFIFO() || stat.isFile() || stat.isSocket()
  } catch {
    return false
  }
}

/** An answer as a person reads it: strings as they are, anything else as JSON. */
export const showValue = (value: unknown): string =>
  typeof value === 'string' ? value : JSON.stringify(value)
