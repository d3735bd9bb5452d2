import { fstatSync } from 'node:fs'
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
}

export function processIo(json: boolean, env: Env): Io {
  const out = (text: string) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`)
  return {
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
    readStdin: () => Bun.stdin.text(),
    stdinIsPiped: isPiped(0),
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
