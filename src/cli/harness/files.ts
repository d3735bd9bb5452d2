import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname } from 'node:path'
import { CliError } from '../../agent/failures.ts'

/**
 * Reading and writing another program's settings files (Claude Code's, Codex's) without ever
 * leaving one half-written or losing what the person put there: a file that does not parse is
 * refused, never overwritten; a new one replaces the old by rename.
 */
export type Json = Record<string, unknown>

export function readJson(path: string): Json {
  if (!existsSync(path)) return {}
  const text = readFileSync(path, 'utf8')
  if (text.trim() === '') return {}
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new CliError(`${path} is not valid JSON (${(error as Error).message}); fix it first`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`${path} does not hold a JSON object; fix it first`)
  }
  return value as Json
}

export function readText(path: string): string {
  return existsSync(path) ? readFileSync(path, 'utf8') : ''
}

/** Writes `text` to `path` atomically, keeping an existing file's permissions (else 0600). */
export function writeAtomic(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true })
  const temp = `${path}.hark-${process.pid}.tmp`
  writeFileSync(temp, text, { mode: 0o600 })
  try {
    if (existsSync(path)) chmodSync(temp, statSync(path).mode & 0o777)
    renameSync(temp, path)
  } catch (error) {
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`)
  }
}

export const jsonText = (value: Json) => `${JSON.stringify(value, null, 2)}\n`

/** A POSIX shell word: as it is when safe, else single-quoted. */
export const shellWord = (word: string) =>
  /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`

/**
 * The command that runs this hark: the compiled binary itself, or `bun src/main.ts` when run
 * from the source tree (development and tests).
 */
export function harkCommand(): string[] {
  const main = Bun.main
  const compiled = main.startsWith('/$bunfs/') || main.startsWith('B:/~BUN/')
  return compiled ? [process.execPath] : [process.execPath, main]
}
