import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Message } from '../../src/messages/schema.ts'
import { addChannel } from '../../src/people/service.ts'
import { type Cli, makeCli, type Ran, removeHome } from '../cli/live.ts'
import { answerBatch, batchRewrite, type Relay, startProxy } from '../harnesses/signed.ts'
import { HARK_MCP } from '../mcp/live.ts'
import type { SoftwareAuthenticator } from '../passkeys/authenticator.ts'
import { type FreshServer, startFreshServer } from '../passkeys/fixture.ts'

/**
 * Batch answers, the agents' side, as real processes: several questions of two agents allowed
 * with one passkey assertion over the list of their claims (POST /v1/app/answers), and each
 * verifier (`hark hook claude`, `hark hook codex`, `hark ask --verify`, the MCP `approve` tool)
 * checks its own item with its own pinned keys. A server (a proxy between one agent and Hark)
 * that drops the agent's item from the list, swaps or moves a sibling, or turns a batch-signed
 * deny into an allow gets nothing acted on, and the other agents are not affected.
 */
let s: FreshServer
let owner: { authenticator: SoftwareAuthenticator; cookie: string }
/** Two agents, each its own channel and its own machine (home, pinned keys). */
let agents: { cli: Cli; env: Record<string, string> }[]
const proxies: Relay[] = []

beforeEach(async () => {
  s = await startFreshServer({ listen: true })
  s.clock.now = () => Date.now()
  owner = await s.setUpOwner()
  agents = []
  for (const label of ['Laptop', 'CI']) {
    const made = await addChannel(s.ctx, { email: 'owner@example.com', label })
    const cli = makeCli()
    const env = { HARK_URL: s.url, HARK_TOKEN: made.token }
    expect((await cli.run(['keys', 'refresh'], { env })).code).toBe(0)
    agents.push({ cli, env })
  }
})
afterEach(async () => {
  for (const p of proxies.splice(0)) p.stop()
  await s.close()
  for (const a of agents) removeHome(a.cli)
})

const event = (command: string) =>
  JSON.stringify({
    hook_event_name: 'PermissionRequest',
    session_id: 'batch-1',
    cwd: '/home/me/p',
    tool_name: 'Bash',
    tool_input: { command },
  })

const askArgs = (command: string) => [
  'ask',
  'Run it?',
  '--block',
  JSON.stringify({ type: 'approval', id: 'approval', tool: 'Bash', input: { command } }),
  '--verify',
  '--json',
]

const openAsks = async (): Promise<Message[]> =>
  (await s.request('GET', '/v1/app/asks', { cookie: owner.cookie })).body.asks

/** Waits until `n` questions are open (the runs have asked), oldest first. */
async function waiting(n: number): Promise<Message[]> {
  for (let i = 0; i < 2000; i++) {
    const open = await openAsks()
    if (open.length >= n) return open
    await Bun.sleep(10)
  }
  throw new Error(`fewer than ${n} questions opened`)
}

/** Signs `questions` as one batch, each answered `answer`, and sends it as the app does. */
const allowAll = (questions: Message[], answer?: unknown) =>
  answerBatch(s, owner, questions, answer)

const by = (questions: Message[], command: string) =>
  questions.find((q) => JSON.stringify(q.body).includes(command)) as Message

const behaviour = (ran: Ran) =>
  ran.stdout === ''
    ? 'none'
    : ran.json<{ hookSpecificOutput: { decision: { behavior: string } } }>().hookSpecificOutput
        .decision.behavior

// biome-ignore lint/suspicious/noExplicitAny: any JSON the server sends
type Json = any

describe('batch answers, verified by each agent', () => {
  test('three questions of two agents, allowed with one gesture: each verifier takes its own', async () => {
    const [a, b] = agents as [(typeof agents)[0], (typeof agents)[0]]
    // Agent A: a Claude Code hook and `hark ask --verify` (the same pinned profile, one
    // counter: the second item of the batch carries the same counter as the first). Agent B:
    // a Codex hook.
    const runs = [
      a.cli.run(['hook', 'claude'], { env: a.env, stdin: event('npm test'), timeoutMs: 30_000 }),
      a.cli.run(askArgs('npm run lint'), { env: a.env, timeoutMs: 30_000 }),
      b.cli.run(['hook', 'codex'], {
        env: b.env,
        stdin: event('npm run build'),
        timeoutMs: 30_000,
      }),
    ]
    const questions = await waiting(3)
    await allowAll(questions)
    const [claude, ask, codex] = (await Promise.all(runs)) as [Ran, Ran, Ran]
    expect([claude.stderr, behaviour(claude)]).toEqual(['', 'allow'])
    expect(ask.code).toBe(0)
    expect(ask.stderr).not.toContain('not trusted')
    expect(ask.json()).toMatchObject({ status: 'answered', answer: { decision: 'allow' } })
    expect([codex.stderr, behaviour(codex)]).toEqual(['', 'allow'])
    const pinned = JSON.parse(await Bun.file(a.cli.configFile).text()).profiles.default.approvers
    expect(Object.keys(pinned.batches)).toHaveLength(1)
  }, 60_000)

  const forgeries: [string, (items: string[], ask: Json) => void, string][] = [
    [
      "the agent's own item dropped from the list",
      (items) => {
        items.splice(0, 1)
      },
      'this answer to this question is not in the signed batch',
    ],
    [
      'a sibling swapped for another claim',
      (items) => {
        items[1] = 'f'.repeat(64)
      },
      'the signature is not over this answer to this question',
    ],
    [
      'the list reordered',
      (items) => {
        items.reverse()
      },
      'the signature is not over this answer to this question',
    ],
    [
      'a batch-signed deny turned into an allow',
      (_items, ask) => {
        ask.answer = { decision: 'allow' }
      },
      'this answer to this question is not in the signed batch',
    ],
  ]
  for (const [what, change, reason] of forgeries) {
    test(`a server that relays ${what}: that hook acts on nothing; the other agent's stands`, async () => {
      const [a, b] = agents as [(typeof agents)[0], (typeof agents)[0]]
      const proxy = startProxy(s.url, batchRewrite(change))
      proxies.push(proxy)
      const lying = { ...a.env, HARK_URL: proxy.url }
      const runs = [
        a.cli.run(['hook', 'claude'], { env: lying, stdin: event('make one'), timeoutMs: 30_000 }),
        b.cli.run(['hook', 'claude'], { env: b.env, stdin: event('make two'), timeoutMs: 30_000 }),
      ]
      const questions = await waiting(2)
      // The person's batch: the first agent's item first, so "dropped" drops it.
      const ordered = [by(questions, 'make one'), by(questions, 'make two')]
      const forgedDeny = what.includes('deny')
      await allowAll(ordered, forgedDeny ? { decision: 'deny' } : { decision: 'allow' })
      const [fooled, straight] = (await Promise.all(runs)) as [Ran, Ran]
      expect(proxy.rewrites).toBeGreaterThan(0)
      expect(behaviour(fooled)).toBe('none')
      expect(fooled.stderr).toContain(`the allow is not trusted (${reason})`)
      expect(behaviour(straight)).toBe(forgedDeny ? 'deny' : 'allow')
    }, 60_000)
  }
})

describe('the MCP approve tool', () => {
  test('allows on its item of a batch; denies when the server drops it from the list', async () => {
    const [a, b] = agents as [(typeof agents)[0], (typeof agents)[0]]
    const home = a.cli.home
    let forge = false
    const proxy = startProxy(
      s.url,
      batchRewrite((items) => {
        if (forge) items.splice(0, 1)
      }),
    )
    proxies.push(proxy)
    const mcp = new Client({ name: 'hark-test', version: '1.0.0' })
    await mcp.connect(
      new StdioClientTransport({
        ...HARK_MCP,
        env: {
          HOME: home,
          XDG_CONFIG_HOME: join(home, 'config'),
          HARK_URL: proxy.url,
          HARK_TOKEN: a.env.HARK_TOKEN as string,
          HARK_HOOK_WAIT: '20',
        },
        stderr: 'pipe',
      }),
    )
    try {
      const approve = async (command: string) => {
        const call = mcp.callTool({
          name: 'approve',
          arguments: { tool_name: 'Bash', input: { command } },
        })
        const other = b.cli.run(['hook', 'codex'], {
          env: b.env,
          stdin: event(`${command} too`),
          timeoutMs: 30_000,
        })
        const questions = await waiting(2)
        await allowAll([by(questions, `"${command}"`), by(questions, `${command} too`)])
        const result = (await call) as { content: { text: string }[] }
        expect(behaviour(await other)).toBe('allow')
        return JSON.parse(result.content[0]?.text as string) as {
          behavior: string
          message?: string
        }
      }
      expect((await approve('npm test')).behavior).toBe('allow')
      forge = true
      const denied = await approve('npm publish')
      expect(denied.behavior).toBe('deny')
      expect(denied.message).toContain('not in the signed batch')
    } finally {
      await mcp.close()
    }
  }, 60_000)
})
