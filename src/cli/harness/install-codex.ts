import { createHash } from 'node:crypto'
import { mkdirSync, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import { CliError } from '../../agent/failures.ts'
import type { Env } from '../../agent/profiles.ts'
import { canonicalJson } from '../../shared/canonical.ts'
import { type Json, jsonText, readJson, readText, shellWord, writeAtomic } from './files.ts'
import type { Change } from './install-claude.ts'

/**
 * `hark install codex` (measured with @openai/codex 0.169.0): the PermissionRequest hook in
 * `$CODEX_HOME/hooks.json`, trusted, and `notify` in `$CODEX_HOME/config.toml`.
 *
 * Codex runs a hook only when `config.toml` holds its trust:
 *   [hooks.state."<realpath of hooks.json>:permission_request:<group>:<handler>"]
 *   trusted_hash = "sha256:<hex of the canonical JSON of the hook's definition>"
 * so the installer writes that too, for exactly the hook it wrote; no
 * `--dangerously-bypass-hook-trust`. TOML is edited only inside blocks between hark's own
 * marker lines (notify must come before any table, the trust table goes last), so everything
 * else in the file stays byte for byte, and `--remove` gives it back as it was. Since trust is
 * keyed by group index, hark's group keeps its place when installed again.
 */
export interface CodexInstall {
  hark: string[]
  waitSeconds: number
  profile?: string
  allowUnsigned?: boolean
  remove: boolean
}

const TOP = ['# >>> hark: notify (written by "hark install codex")', '# <<< hark: notify']
const END = ['# >>> hark: hook trust (written by "hark install codex")', '# <<< hark: hook trust']
const STATUS = 'Waiting for the answer in Hark'

export const codexHome = (env: Env) => env.CODEX_HOME || join(env.HOME || homedir(), '.codex')

const isOurs = (command: unknown) =>
  typeof command === 'string' && /(^|\s)hook\s+codex(\s|$)/.test(command)

/** A matcher group holding hark's handler (anything malformed is the person's, left alone). */
const isOurGroup = (group: unknown) => {
  const handlers = (group as { hooks?: unknown } | null)?.hooks
  return (
    Array.isArray(handlers) &&
    handlers.some((h) => isOurs((h as { command?: unknown } | null)?.command))
  )
}

interface Handler {
  type: 'command'
  command: string
  timeout: number
  statusMessage: string
}

/** Codex's trust hash of one handler group with no matcher. */
export function trustHash(handler: Handler): string {
  const definition = {
    event_name: 'permission_request',
    hooks: [{ async: false, ...handler }],
  }
  return `sha256:${createHash('sha256').update(canonicalJson(definition)).digest('hex')}`
}

/** `text` without the lines from `start` to `end` (hark's block), if it has them. */
function withoutBlock(text: string, [start, end]: string[]): string {
  const lines = text.split('\n')
  const from = lines.indexOf(start as string)
  const to = lines.indexOf(end as string)
  if (from === -1 || to < from) return text
  lines.splice(from, to - from + 1)
  return lines.join('\n')
}

const tomlString = (s: string) => JSON.stringify(s)

export function installCodex(env: Env, o: CodexInstall): Change[] {
  const home = codexHome(env)
  mkdirSync(home, { recursive: true })
  // Codex keys trust by the real path: through a symlinked CODEX_HOME only that one counts.
  const real = realpathSync(home)
  const changes: Change[] = []

  const hooksFile = join(home, 'hooks.json')
  const hooksJson = readJson(hooksFile)
  const hooks = { ...((hooksJson.hooks ?? {}) as Json) }
  if (hooks.PermissionRequest !== undefined && !Array.isArray(hooks.PermissionRequest)) {
    // Replacing it would lose what the person wrote there.
    throw new CliError(`${hooksFile}: hooks.PermissionRequest is not a list; fix it first`)
  }
  const groups = (hooks.PermissionRequest ?? []) as unknown[]
  const words = [
    ...o.hark,
    'hook',
    'codex',
    ...(o.profile ? ['--profile', o.profile] : []),
    ...(o.allowUnsigned ? ['--allow-unsigned'] : []),
  ]
  const handler: Handler = {
    type: 'command',
    command: [...words, '--wait', String(o.waitSeconds)].map(shellWord).join(' '),
    timeout: o.waitSeconds + 60,
    statusMessage: STATUS,
  }
  // Trust is keyed by the group's index: installing again replaces hark's group where it is, so
  // the person's own groups after it keep their index and with it their trust.
  const ourIndex = groups.findIndex(isOurGroup)
  const index = ourIndex === -1 ? groups.length : ourIndex
  const nextGroups = groups.flatMap((group, i) => {
    if (!isOurGroup(group)) return [group]
    return !o.remove && i === ourIndex ? [{ hooks: [handler] }] : []
  })
  if (!o.remove && ourIndex === -1) nextGroups.push({ hooks: [handler] })
  if (nextGroups.length > 0) hooks.PermissionRequest = nextGroups
  else delete hooks.PermissionRequest
  const nextHooks: Json = { ...hooksJson }
  if (Object.keys(hooks).length > 0) nextHooks.hooks = hooks
  else delete nextHooks.hooks

  const configFile = join(home, 'config.toml')
  const before = readText(configFile)
  let text = withoutBlock(withoutBlock(before, TOP), END)
  const parsed = parseToml(configFile, text)
  const notes: string[] = []
  if (!o.remove) {
    if (parsed.notify === undefined) {
      const notify = `notify = [${words.map(tomlString).join(', ')}]`
      text = `${[TOP[0], notify, TOP[1]].join('\n')}\n${text}`
    } else {
      notes.push('kept your own notify (Codex allows one); turn summaries are not sent')
    }
    const parsedHooks = (parsed.hooks ?? {}) as Json
    if (Object.keys(parsedHooks).some((k) => k !== 'state')) {
      notes.push('declares hooks too: Codex warns about hooks in both files, and runs both')
    }
    const key = `${real}/hooks.json:permission_request:${index}:0`
    const hash = trustHash(handler)
    const existing = ((parsedHooks.state ?? {}) as Json)[key] as Json | undefined
    if (existing === undefined) {
      // Appended as it is: removing the block later gives back the file byte for byte.
      const trust = [
        END[0],
        `[hooks.state.${tomlString(key)}]`,
        `trusted_hash = ${tomlString(hash)}`,
      ]
      if (text !== '' && !text.endsWith('\n')) text += '\n'
      text += `${[...trust, END[1]].join('\n')}\n`
    } else if (existing.trusted_hash !== hash) {
      // The person's (or Codex's) own entry for this slot: not hark's to overwrite.
      throw new CliError(
        `${configFile} already has [hooks.state."${key}"]; remove that table and run this again`,
      )
    }
    parseToml(configFile, text)
  }

  // Both files are worked out (and checked) before either is written: no half install.
  if (JSON.stringify(nextHooks) !== JSON.stringify(hooksJson)) {
    writeAtomic(hooksFile, jsonText(nextHooks))
    changes.push({
      path: hooksFile,
      what: o.remove ? 'removed the hark hook' : 'PermissionRequest hook',
    })
    // Their trust is keyed by their old index: Codex will want them reviewed again.
    const moved = o.remove ? groups.filter((g, i) => i > index && !isOurGroup(g)).length : 0
    if (moved > 0) {
      changes.push({
        path: hooksFile,
        what: `${moved} PermissionRequest group(s) of yours moved up one place: Codex asks you to review them again`,
      })
    }
  } else changes.push({ path: hooksFile, what: 'already up to date' })
  if (text !== before) {
    writeAtomic(configFile, text)
    changes.push({
      path: configFile,
      what: o.remove ? 'removed notify and hook trust' : 'notify, and trust for the hook',
    })
  } else changes.push({ path: configFile, what: 'already up to date' })
  for (const note of notes) changes.push({ path: configFile, what: note })
  return changes
}

function parseToml(path: string, text: string): Json {
  try {
    return Bun.TOML.parse(text) as Json
  } catch (error) {
    throw new CliError(`${path} is not valid TOML (${(error as Error).message}); fix it first`)
  }
}
