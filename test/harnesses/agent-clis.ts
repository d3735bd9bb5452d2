// test-needs: agent-clis
// (the real Claude Code, Codex and Deno, installed by scripts/agent-clis.sh into .cache/. See scripts/test-parts.ts.)
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { TEST_CACHE } from '../cache.ts'

/**
 * Where scripts/agent-clis.sh (run by `npm run test:e2e` before these files) installed the real
 * Claude Code and Codex CLIs and Deno: the project's own cache (.cache/agent-clis in the
 * checkout), never part of the product's install.
 */
export const AGENT_CLIS = process.env.HARK_AGENT_CLIS ?? join(TEST_CACHE, 'agent-clis')

const bin = (name: string) => {
  const path = join(AGENT_CLIS, 'node_modules', '.bin', name)
  if (!existsSync(path)) throw new Error(`${path} is missing: run bash scripts/agent-clis.sh`)
  return path
}

export const claudeBin = () => bin('claude')
export const codexBin = () => bin('codex')
export const denoBin = () => bin('deno')
