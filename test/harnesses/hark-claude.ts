import { expect } from 'bun:test'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Block, Message } from '../../src/messages/schema.ts'
import type { LiveCli } from '../cli/live.ts'
import { type AnthropicStub, type StubTurn, startAnthropicStub } from './anthropic-stub.ts'
import { type ClaudeRun, type ClaudeSandbox, makeClaudeSandbox, runClaude } from './claude-code.ts'
import { channelMessages, HARK, type HarkRan } from './hark-codex.ts'

/**
 * Hark wired into the real Claude Code (2.1.330) the way a person does it: `hark install claude`
 * writes the hooks and the "hark" MCP server into the sandbox's HOME (or project), and Claude
 * Code, in `-p` mode against the loopback Messages API stub, runs those commands itself. The
 * person answers through the API as the app does. The hark under test is `dist/hark` when it is
 * fresh, else `bun src/main.ts` (see HARK in hark-codex.ts).
 */
export { HARK }

/** A fixture for one test: the sandbox, the model stub, and what the test started in it. */
export interface ClaudeWorld {
  box: ClaudeSandbox
  stub: AnthropicStub
}

let current: ClaudeWorld | undefined

/** Stops the stub and removes the sandbox of the test that just ran (for `afterEach`). */
export function cleanupWorld() {
  current?.stub.stop()
  current?.box.cleanup()
  current = undefined
}

/** `hark ...args` in the sandbox's project, with its HOME and nothing of the tester's Hark. */
export async function runHark(
  box: ClaudeSandbox,
  args: string[],
  env: Record<string, string> = {},
): Promise<HarkRan> {
  const proc = Bun.spawn([...HARK.argv, ...args], {
    cwd: box.work,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: box.home, ...env },
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

/** A fresh sandbox and stub (playing `turns`), with `hark install claude ...installArgs` run. */
export async function installed(
  live: LiveCli,
  turns: StubTurn[],
  installArgs: string[] = [],
): Promise<ClaudeWorld> {
  const world = { box: makeClaudeSandbox(), stub: startAnthropicStub(turns) }
  current = world
  const install = await runHark(world.box, ['install', 'claude', ...installArgs], live.env)
  expect([install.code, install.stderr]).toEqual([0, ''])
  return world
}

/**
 * `claude -p PROMPT ...args` in the sandbox, connected to Hark through the environment the hooks
 * and the MCP server inherit. Bounded: with its API unreachable Claude Code retries for minutes.
 */
export const claudeP = (
  live: LiveCli,
  { box, stub }: ClaudeWorld,
  args: string[] = [],
  timeoutMs = 40_000,
): Promise<ClaudeRun> =>
  runClaude({
    cwd: box.work,
    home: box.home,
    baseUrl: stub.baseUrl,
    args: ['-p', 'do it', ...args],
    // Plumbing: these answers come unsigned from the API (test/trust/* checks signatures).
    env: { ...live.env, HARK_ALLOW_UNSIGNED: '1' },
    timeoutMs,
  })

/** Claude Code ended by itself (not by the hard bound) and successfully. */
export const expectFinished = (run: ClaudeRun) => {
  if (run.timedOut || run.exitCode !== 0) {
    throw new Error(`claude did not finish cleanly: ${JSON.stringify(run)}`)
  }
}

/** The model's turn calling Bash with `command` (a command that writes, so it prompts). */
export const bashTurn = (command: string, description = 'Make a file'): StubTurn => ({
  text: 'I will run it.',
  tool_use: { name: 'Bash', input: { command, description } },
})

/** The first block of a question (an approval's card). */
export const blockOf = (m: Message): Block => m.body.blocks?.[0] ?? ({} as Block)

/**
 * The next question of `type` the run put on the server that was not there before, found as the
 * app finds it (`GET /v1/app/asks`); fails if the run ends first or 25 s pass.
 */
export async function nextAsk(
  live: LiveCli,
  before: Set<string>,
  running: Promise<ClaudeRun>,
  type?: 'approval',
): Promise<Message> {
  let ended: ClaudeRun | undefined
  void running.then((run) => {
    ended = run
  })
  const deadline = Date.now() + 25_000
  while (!ended && Date.now() < deadline) {
    const { asks } = await live.server.person.openAsks(type)
    const found = asks.find((m) => !before.has(m.id))
    if (found) return found
    await Bun.sleep(25)
  }
  throw new Error(`no new question on the server; the run: ${JSON.stringify(ended ?? 'running')}`)
}

/** Ids of the questions open now, so a test finds only the ones its run asks. */
export async function openAskIds(live: LiveCli): Promise<Set<string>> {
  const { asks } = await live.server.person.openAsks()
  return new Set(asks.map((m) => m.id))
}

/** The message `id` as the person's app sees it now. */
export const messageById = async (live: LiveCli, id: string): Promise<Message | undefined> =>
  (await channelMessages(live)).find((m) => m.id === id)

/** Every approval asked for the Claude Code session `session`, answered or not. */
export const approvalsOf = async (live: LiveCli, session: string): Promise<Message[]> =>
  (await channelMessages(live)).filter(
    (m) => blockOf(m).type === 'approval' && blockOf(m).session === session,
  )

/**
 * The tests' own MCP server (claude-mcp-fixture.ts) as a `--mcp-config` file named `fixture`,
 * its signal files in the sandbox root.
 */
export function fixtureConfig(box: ClaudeSandbox): string {
  const path = join(box.root, 'fixture-mcp.json')
  const server = {
    type: 'stdio',
    command: process.execPath,
    args: [join(import.meta.dir, 'claude-mcp-fixture.ts')],
    env: { FIXTURE_DIR: box.root },
  }
  writeFileSync(path, JSON.stringify({ mcpServers: { fixture: server } }))
  return path
}

/** Drops a fixture's signal file (`go`, `release`). */
export const signal = (box: ClaudeSandbox, name: string) => writeFileSync(join(box.root, name), '')

/** Parses a JSON file, or undefined when it is not there. */
export const readJsonFile = (path: string): unknown =>
  existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : undefined

/** Polls `find` until it gives a value (or `ms` pass: then undefined). */
export async function eventually<T>(
  find: () => T | undefined | Promise<T | undefined>,
  ms = 15_000,
) {
  const deadline = Date.now() + ms
  for (;;) {
    const found = await find()
    if (found !== undefined || Date.now() > deadline) return found
    await Bun.sleep(25)
  }
}
