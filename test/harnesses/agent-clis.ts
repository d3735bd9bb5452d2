// test-needs: agent-clis
// (the real Claude Code, Codex and Deno, installed by scripts/agent-clis.sh into .cache/. See scripts/test-parts.ts.)
import { existsSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/**
 * Where scripts/agent-clis.sh (run by `npm test` before the suite) installed the real Claude Code
 * and Codex CLIs: a cache outside the repository, never part of the product's install.
 */
export const AGENT_CLIS =
  process.env.HARK_AGENT_CLIS ??
  join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'hark-test', 'agent-clis')

const bin = (name: string) => {
  const path = join(AGENT_CLIS, 'node_modules', '.bin', name)
  if (!existsSync(path)) throw new Error(`${path} is missing: run bash scripts/agent-clis.sh`)
  return path
}

export const claudeBin = () => bin('claude')
export const codexBin = () => bin('codex')
export const denoBin = () => bin('deno')
