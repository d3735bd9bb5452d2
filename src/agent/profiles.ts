import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { CliError, fileError } from './failures.ts'
import type { PinnedApprovers } from './proof.ts'

/**
 * The agent's stored connection: `$XDG_CONFIG_HOME/hark/config.json` (else `~/.config/hark`),
 * holding one entry per profile. The file holds tokens, so it is 0600 in a 0700 directory,
 * and it is replaced atomically (write a temporary file, rename) so a crash never leaves half.
 */
export interface Profile {
  url?: string
  token?: string
  channel?: { id: string; label: string }
  /**
   * The person's passkeys, pinned when this machine was connected (trust on first use) and
   * changed only by `hark keys refresh` with a signature from one already pinned: what signed
   * answers are checked against (src/agent/proof.ts).
   */
  approvers?: PinnedApprovers
}

export interface ConfigFile {
  profiles: Record<string, Profile>
  /**
   * Where each token's inbox reading got to (a change-feed cursor), keyed by a hash of the
   * token: `hark inbox` shows what is new since the last read, and a token from `HARK_TOKEN`
   * keeps its place too.
   */
  inbox?: Record<string, number>
}

export type Env = Record<string, string | undefined>

export const DEFAULT_PROFILE = 'default'

export function configDir(env: Env): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config')
  return join(base, 'hark')
}

export const configPath = (env: Env) => join(configDir(env), 'config.json')

export function loadConfig(env: Env): ConfigFile {
  const path = configPath(env)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} }
    throw fileError('read', path, error)
  }
  try {
    const parsed = JSON.parse(text) as Partial<ConfigFile>
    return { ...parsed, profiles: parsed.profiles ?? {} }
  } catch {
    throw new CliError(`${path} is not valid JSON; fix it or remove it and run "hark init" again`)
  }
}

/**
 * Fails with a `CliError` naming the file and the cause: a read-only home or an agent's sandbox
 * is a local problem, and the raw fs error (it has a `.code`) would pass for a network one.
 */
export function saveConfig(env: Env, config: ConfigFile): void {
  const dir = configDir(env)
  const path = configPath(env)
  const temporary = `${path}.${process.pid}.tmp`
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    // mkdir leaves an existing directory's mode alone; this one is ours and holds secrets.
    chmodSync(dir, 0o700)
    writeFileSync(temporary, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
    chmodSync(temporary, 0o600)
    renameSync(temporary, path)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw fileError('write', path, error)
  }
}

/**
 * Reads, changes and writes the file in one step (the last writer wins). A change that changes
 * nothing writes nothing, so a command that only might record something (a question's id, once
 * passkeys are pinned) still works where the file cannot be written.
 */
export function updateConfig(env: Env, change: (config: ConfigFile) => void): ConfigFile {
  const config = loadConfig(env)
  const before = JSON.stringify(config)
  change(config)
  if (JSON.stringify(config) !== before) saveConfig(env, config)
  return config
}
