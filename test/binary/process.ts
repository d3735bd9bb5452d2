import { existsSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { openDatabase } from '../../src/db/database.ts'
import { addChannel, addUser } from '../../src/people/service.ts'
import { directProvisioning } from '../../src/server/context.ts'

/** The compiled executable these tests run; `bun run build` writes it. */
export const HARK = join(import.meta.dir, '..', '..', 'dist', 'hark')

export function requireBinary(): void {
  if (!existsSync(HARK)) throw new Error(`${HARK} is missing: run "bun run build" first`)
}

export interface Ran {
  code: number
  stdout: string
  stderr: string
}

/** Runs `hark ...args` to completion (bounded by `timeoutMs`). */
export async function run(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<Ran> {
  const proc = Bun.spawn([HARK, ...args], {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: timeoutMs,
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}

export interface Served {
  proc: Subprocess<'ignore', 'pipe', 'pipe'>
  url: string
  /** Everything the server has logged so far. */
  log(): string
}

/**
 * Starts `hark serve` on a free loopback port and resolves once it logs its address. Rejects
 * (with the log) if it exits first or does not come up in time.
 */
export async function startServe(
  args: string[],
  env: Record<string, string> = {},
): Promise<Served> {
  const proc = Bun.spawn([HARK, 'serve', '--host', '127.0.0.1', '--port', '0', ...args], {
    env: { ...process.env, ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let log = ''
  const decoder = new TextDecoder()
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) log += decoder.decode(chunk)
  }
  void drain(proc.stdout)
  void drain(proc.stderr)
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const m = /listening on (http:\/\/[^\s]+)/.exec(log)
    if (m) return { proc, url: m[1] as string, log: () => log }
    if (proc.exitCode !== null) throw new Error(`hark serve exited ${proc.exitCode}:\n${log}`)
    await Bun.sleep(20)
  }
  proc.kill('SIGKILL')
  throw new Error(`hark serve did not start in 10 s:\n${log}`)
}

/** A channel provisioned for a test, and its agent's token. */
export interface Agent {
  token: string
  channel: string
}

/**
 * A data directory for `hark serve` at `dir`: the owner `email` and one channel per label,
 * written through the real schema and services; the channels and their agents' tokens, in order.
 */
export async function provisionAgents<L extends string[]>(
  dir: string,
  email: string,
  labels: [...L],
): Promise<{ [K in keyof L]: Agent }> {
  const db = openDatabase(join(dir, 'hark.db'))
  try {
    const p = directProvisioning(db)
    await addUser(p, { email, owner: true })
    const agents: Agent[] = []
    for (const label of labels) {
      const made = await addChannel(p, { email, label })
      agents.push({ token: made.token, channel: made.channel.id })
    }
    await p.writes.close()
    return agents as { [K in keyof L]: Agent }
  } finally {
    db.close()
  }
}
