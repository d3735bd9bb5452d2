import { expect } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Logger } from '../../src/core/log.ts'

/** A secret no test sends in plain text anywhere: finding it on disk or in a log is a leak. */
export const canary = () => `canary-${crypto.randomUUID()}`

/** A logger that keeps every line, to search for what must never be logged. */
export function captureLog(): Logger & { text(): string } {
  const lines: string[] = []
  return {
    info: (m) => lines.push(m),
    warn: (m) => lines.push(m),
    error: (m) => lines.push(m),
    text: () => lines.join('\n'),
  }
}

/** Every file under `dir`, the database, its WAL and the file store included. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    return statSync(path).isDirectory() ? filesUnder(path) : [path]
  })
}

/** The plaintext appears in none of the data directory's files, nor in the log. */
export function expectNoPlaintext(dataDir: string, secret: string, log?: string): void {
  const needle = Buffer.from(secret)
  const files = filesUnder(dataDir)
  expect(files.some((f) => f.endsWith('hark.db'))).toBe(true)
  for (const file of files) {
    expect({ file, leaked: readFileSync(file).includes(needle) }).toEqual({ file, leaked: false })
  }
  if (log !== undefined) expect(log.includes(secret)).toBe(false)
}
