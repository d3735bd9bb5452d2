import { existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { Message } from '../../src/messages/schema.ts'
import type { LiveCli } from '../cli/live.ts'
import { sleep } from '../harness.ts'
import { type CodexRun, type CodexSandbox, runCodex } from './codex.ts'
import type { OpenAIStub, StubRequest } from './openai-stub.ts'

/**
 * Hark wired into the real Codex CLI the way a person does it: `hark install codex` writes the
 * hook, its trust and notify into the sandbox's CODEX_HOME, and Codex runs that command itself.
 */

const ROOT = join(import.meta.dir, '..', '..')
const DIST = join(ROOT, 'dist', 'hark')
const MAIN = join(ROOT, 'src', 'main.ts')

/** The newest modification time of any file under `dir`. */
const newestMtime = (dir: string): number => {
  let newest = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    const ms = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs
    if (ms > newest) newest = ms
  }
  return newest
}

/**
 * The hark these tests install: `dist/hark` when it is at least as new as every source file
 * (`npm test` builds it just before the suite, so CI runs what ships), else `bun src/main.ts`:
 * a stale binary would test yesterday's code, and building here would race other suites that run
 * `dist/hark`. `hark install` writes whichever ran it into Codex's config, so the hook Codex runs
 * is the same one.
 */
export const HARK: { argv: string[]; kind: 'dist/hark' | 'bun src/main.ts' } =
  existsSync(DIST) && statSync(DIST).mtimeMs >= newestMtime(join(ROOT, 'src'))
    ? { argv: [DIST], kind: 'dist/hark' }
    : { argv: [process.execPath, MAIN], kind: 'bun src/main.ts' }

export interface HarkRan {
  code: number | null
  stdout: string
  stderr: string
}

/** `hark ...args` with the sandbox's HOME and CODEX_HOME and nothing of the tester's Hark. */
export async function runHark(
  sandbox: CodexSandbox,
  args: string[],
  env: Record<string, string> = {},
): Promise<HarkRan> {
  const proc = Bun.spawn([...HARK.argv, ...args], {
    cwd: sandbox.work,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: sandbox.home,
      CODEX_HOME: sandbox.codexHome,
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
    timeout: 20_000,
  })
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout, stderr }
}

/**
 * Codex's own model reviewer (the "guardian") posts to the same provider; its requests carry
 * `prompt_cache_key: "guardian:<thread>"` and a `text.format` JSON schema asking for a
 * `risk_level` (measured with 0.169.0). The agent's own turns have neither.
 */
export const isReviewerRequest = ({ body }: StubRequest) =>
  (typeof body.prompt_cache_key === 'string' && body.prompt_cache_key.startsWith('guardian:')) ||
  JSON.stringify(body.text ?? null).includes('risk_level')

export const reviewerRequests = (stub: OpenAIStub) => stub.requests.filter(isReviewerRequest)

/**
 * `codex exec --approve-for-me PROMPT` in the sandbox, connected to Hark through `env`. Never
 * `--dangerously-bypass-hook-trust`: the trust `hark install codex` wrote is what lets the hook run.
 */
export const execCodex = (
  sandbox: CodexSandbox,
  prompt: string,
  env: Record<string, string>,
  approve = true,
): Promise<CodexRun> =>
  runCodex({
    cwd: sandbox.work,
    codexHome: sandbox.codexHome,
    home: sandbox.home,
    args: ['exec', '--skip-git-repo-check', ...(approve ? ['--approve-for-me'] : []), prompt],
    env,
    // A loaded 2-core box starts Codex and bun in seconds, not tens of them.
    timeoutMs: 25_000,
  })

/**
 * The approval question the hook put on the server that was not open before, found as the app
 * finds it (`GET /v1/app/asks?type=approval`); undefined if `done` settles first or 20 s pass.
 */
export async function nextApproval(
  live: LiveCli,
  before: Set<string>,
  done: Promise<unknown>,
): Promise<Message | undefined> {
  let settled = false
  void done.then(() => {
    settled = true
  })
  const deadline = Date.now() + 20_000
  while (!settled && Date.now() < deadline) {
    const { asks } = await live.server.person.openAsks('approval')
    const found = asks.find((m) => !before.has(m.id))
    if (found) return found
    await sleep(25)
  }
  return undefined
}

/** Ids of the approvals open now, so a test finds only the one its run asks. */
export async function openApprovalIds(live: LiveCli): Promise<Set<string>> {
  const { asks } = await live.server.person.openAsks('approval')
  return new Set(asks.map((m) => m.id))
}

/** The channel's messages, as the person's app reads them. */
export async function channelMessages(live: LiveCli): Promise<Message[]> {
  const { messages } = await live.server.person.feed(live.server.channelId, {
    limit: 200,
    peek: true,
  })
  return messages.filter((m): m is Message => !('deleted' in m))
}

/** Waits (up to `ms`) for a channel message matching `find`. */
export async function waitForMessage(
  live: LiveCli,
  find: (m: Message) => boolean,
  ms = 15_000,
): Promise<Message | undefined> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    const found = (await channelMessages(live)).find(find)
    if (found) return found
    await sleep(50)
  }
  return undefined
}
