import {
  chmodSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { replaceFileSynced } from '../core/durable-files.ts'
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
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    // mkdir leaves an existing directory's mode alone; this one is ours and holds secrets.
    chmodSync(dir, 0o700)
    // A power cut never leaves an empty file in place of the profiles and the approvers'
    // pinned keys.
    replaceFileSynced(path, `${JSON.stringify(config, null, 2)}\n`, 0o600)
  } catch (error) {
    throw fileError('write', path, error)
  }
}

/**
 * Reads, changes and writes the file in one step, holding `config.json.lock` throughout: hooks
 * of parallel sessions on one profile record a policy's use or a batch's answers at the same
 * moment, and a plain read-change-write let the last writer drop the other's entry (a lost
 * batch entry made a hook refuse an answer the person gave). A change that changes nothing
 * writes nothing, so a command that only might record something (a question's id, once
 * passkeys are pinned) still works where the file cannot be written; where not even the lock
 * can be made there (a read-only home), it runs unlocked, as before.
 */
export function updateConfig(env: Env, change: (config: ConfigFile) => void): ConfigFile {
  const release = lockConfig(env)
  try {
    const config = loadConfig(env)
    const before = JSON.stringify(config)
    change(config)
    if (JSON.stringify(config) !== before) saveConfig(env, config)
    return config
  } finally {
    release()
  }
}

/** How long an update waits for another process's; then the lock is taken as abandoned. */
export const CONFIG_LOCK_WAIT_MS = 2000
/** A lock this old is abandoned whoever holds it: an update holds it for milliseconds. */
const CONFIG_LOCK_STALE_MS = 10_000

/**
 * Takes the lock (a file made with O_EXCL holding the taker's pid) and answers its release. A
 * lock whose process is gone, or older than any update takes, is broken at once; one still
 * held after `CONFIG_LOCK_WAIT_MS` is taken over (a hook must not hang on a stuck process).
 */
function lockConfig(env: Env): () => void {
  const lock = `${configPath(env)}.lock`
  const deadline = Date.now() + CONFIG_LOCK_WAIT_MS
  try {
    mkdirSync(configDir(env), { recursive: true, mode: 0o700 })
  } catch {
    return () => {}
  }
  for (;;) {
    let fd: number
    try {
      fd = openSync(lock, 'wx', 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return () => {}
      if (abandoned(lock) || Date.now() > deadline) rmSync(lock, { force: true })
      else Bun.sleepSync(2)
      continue
    }
    try {
      writeSync(fd, String(process.pid))
    } finally {
      closeSync(fd)
    }
    return () => rmSync(lock, { force: true })
  }
}

function abandoned(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, 'utf8'))
    if (Date.now() - statSync(lock).mtimeMs > CONFIG_LOCK_STALE_MS) return true
    // Made but its pid not yet written: a taker between two steps, not an abandoned lock.
    if (!Number.isInteger(pid) || pid <= 0) return false
    process.kill(pid, 0)
    return false
  } catch (error) {
    // ESRCH: no such process. ENOENT: released meanwhile (the next try takes it).
    return (error as NodeJS.ErrnoException).code === 'ESRCH'
  }
}
