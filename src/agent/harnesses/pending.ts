import { createHash } from 'node:crypto'
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'
import type { Env } from '../profiles.ts'

/**
 * The approvals a harness session still has open on the phone, one small file each under
 * `$XDG_STATE_HOME/hark/pending/<session>/<message id>` holding the action's request hash.
 * When the person decides in the terminal instead, Claude Code runs the tool (or stops) and the
 * `PostToolUse` / `Stop` hook withdraws what is left here. That hook runs after every tool, so a
 * session with nothing open must cost a directory read and no network call.
 *
 * Best effort: a state directory that cannot be written loses only this clean-up.
 */
export interface PendingApprovals {
  add(messageId: string, requestHash: string): void
  remove(messageId: string): void
  /** Open ones of the session; with `requestHash`, only those for that exact action. */
  list(requestHash?: string): string[]
}

export function stateDir(env: Env): string {
  const base = env.XDG_STATE_HOME || join(env.HOME || homedir(), '.local', 'state')
  return join(base, 'hark')
}

/** Session ids come from the harness: hashed into a safe directory name. */
const dirName = (session: string) => createHash('sha256').update(session).digest('hex').slice(0, 32)

/** Message ids are the server's (`msg_…`); anything else is never used as a file name. */
const SAFE_ID = /^[A-Za-z0-9_-]{1,64}$/

export function pendingApprovals(env: Env, session: string): PendingApprovals {
  const dir = join(stateDir(env), 'pending', dirName(session))
  return {
    add(messageId, requestHash) {
      if (!SAFE_ID.test(messageId)) return
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 })
        writeFileSync(join(dir, messageId), requestHash, { mode: 0o600 })
      } catch {
        // Only the terminal clean-up is lost; the question itself stands.
      }
    },
    remove(messageId) {
      if (!SAFE_ID.test(messageId)) return
      rmSync(join(dir, messageId), { force: true })
      try {
        if (readdirSync(dir).length === 0) rmSync(dir, { recursive: true, force: true })
      } catch {
        // Already gone.
      }
    },
    list(requestHash) {
      let names: string[]
      try {
        names = readdirSync(dir)
      } catch {
        return []
      }
      return names.filter((name) => {
        if (!SAFE_ID.test(name)) return false
        if (requestHash === undefined) return true
        try {
          return readFileSync(join(dir, name), 'utf8') === requestHash
        } catch {
          return false
        }
      })
    },
  }
}
