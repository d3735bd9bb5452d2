import { expect } from 'bun:test'
import type { Message } from '../../src/messages/schema.ts'
import { sleep } from '../harness.ts'
import type { LiveCli, Ran } from './live.ts'

/**
 * Running `hark hook …` as the agent would (event JSON on stdin, or as notify's last argument)
 * while the person answers through the API as the app does.
 */
export interface HookRun {
  /** The question the hook asked, once it is on the server. */
  asked(): Promise<Message>
  finished: Promise<Ran>
}

export function startHook(
  live: LiveCli,
  args: string[],
  event: unknown,
  // Plumbing: answers here come unsigned from the API; test/trust/hooks.test.ts signs them.
  env: Record<string, string> = { ...live.env, HARK_ALLOW_UNSIGNED: '1' },
): HookRun {
  const before = new Set<string>()
  const seen = live.server.person.openAsks().then((r) => {
    for (const m of r.asks) before.add(m.id)
  })
  const finished = seen.then(() =>
    live.cli.run(['hook', ...args], {
      env,
      stdin: typeof event === 'string' ? event : JSON.stringify(event),
      timeoutMs: 25_000,
    }),
  )
  return {
    finished,
    async asked() {
      await seen
      let done = false
      finished.then(() => {
        done = true
      })
      const deadline = Date.now() + 15_000
      while (!done && Date.now() < deadline) {
        const { asks } = await live.server.person.openAsks()
        const found = asks.find((m) => !before.has(m.id))
        if (found) return found
        await sleep(10)
      }
      throw new Error(`the hook asked nothing: ${JSON.stringify(await finished)}`)
    },
  }
}

/** Runs the hook, answers its question with `answer`, and returns what it printed. */
export async function hookAnswered(
  live: LiveCli,
  args: string[],
  event: unknown,
  answer: unknown,
): Promise<{ ran: Ran; question: Message; output: Record<string, unknown> }> {
  const run = startHook(live, args, event)
  const question = await run.asked()
  await live.server.person.answer(question.id, answer)
  const ran = await run.finished
  expect([ran.code, ran.stderr]).toEqual([0, ''])
  return { ran, question, output: ran.stdout ? ran.json() : {} }
}

/** Exit 0, nothing on stdout, exactly one line on stderr (matching `pattern`). */
export function expectNoDecision(ran: Ran, pattern: RegExp): void {
  expect(ran.code).toBe(0)
  expect(ran.stdout).toBe('')
  const lines = ran.stderr.trimEnd().split('\n')
  expect(lines.length).toBe(1)
  expect(lines[0]).toMatch(pattern)
}

export const permissionRequest = (
  tool: string,
  input: unknown,
  extra: Record<string, unknown> = {},
) => ({
  hook_event_name: 'PermissionRequest',
  session_id: 'session-1',
  transcript_path: '/tmp/t.jsonl',
  cwd: '/home/me/project',
  permission_mode: 'default',
  tool_name: tool,
  tool_input: input,
  ...extra,
})

/** A loopback address where nothing listens (the port of a server just closed). */
export async function deadUrl(): Promise<string> {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const url = `http://127.0.0.1:${server.port}`
  await server.stop(true)
  return url
}
