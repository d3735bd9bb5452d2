import { expect } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The Containerfile, as shipped, read into its instructions (for container-file.test.ts and the
 * image's own checks in container-image.test.ts), and a command runner with a bound.
 */
export const REPO = join(import.meta.dir, '..', '..')
export const CONTAINERFILE = join(REPO, 'Containerfile')
export const text = readFileSync(CONTAINERFILE, 'utf8')
/** The instructions, continuation lines joined, comments dropped. */
export const instructions = text
  .replace(/\\\n/g, ' ')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'))
export const all = (keyword: string) =>
  instructions
    .filter((line) => line.split(/\s+/)[0]?.toUpperCase() === keyword)
    .map((line) => line.slice(keyword.length).trim())
export const one = (keyword: string) => {
  const found = all(keyword)
  expect(found).toHaveLength(1)
  return found[0] as string
}

/** The HEALTHCHECK's command (exec form: a JSON array after CMD). */
export const healthCommand = () => {
  const m = /\bCMD\s+(\[.*\])\s*$/.exec(one('HEALTHCHECK'))
  if (!m) throw new Error('HEALTHCHECK has no exec-form CMD')
  return JSON.parse(m[1] as string) as string[]
}

export interface Ran {
  code: number
  out: string
  err: string
}

/** Runs a command to completion, killed after `timeoutMs`. */
export async function sh(cmd: string[], timeoutMs = 60_000, env: Record<string, string> = {}) {
  const proc = Bun.spawn(cmd, {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: timeoutMs,
  })
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, out, err } satisfies Ran
}
