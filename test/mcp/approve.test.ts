import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { Block, Message } from '../../src/messages/schema.ts'
import { startTestServer, type TestServer, tempDir } from '../harness.ts'
import { HARK_MCP } from './live.ts'

/**
 * The MCP `approve` tool as Claude Code's --permission-prompt-tool calls it, through the official
 * SDK client: `{ tool_name, input }` in, one text item of `{ behavior, ... }` JSON out.
 */
let server: TestServer
let client: Client
let home: string

beforeAll(async () => {
  server = await startTestServer({ listen: true })
  home = tempDir('hark-mcp-approve-')
  client = new Client({ name: 'hark-test', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      // dist/hark when it is fresh, else bun src/main.ts (live.ts).
      ...HARK_MCP,
      env: {
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        HARK_URL: server.url,
        HARK_TOKEN: server.agentToken,
        HARK_ALLOW_UNSIGNED: '1',
        HARK_HOOK_WAIT: '2',
        // As Claude Code starts its MCP servers: the session's id in the environment.
        CLAUDE_CODE_SESSION_ID: 'session-mcp',
      },
      stderr: 'pipe',
    }),
  )
})
afterAll(async () => {
  await client.close()
  await server.close()
  rmSync(home, { recursive: true, force: true })
})

/** Calls approve while the person answers its question with `answer` (none: never answered). */
async function approve(args: Record<string, unknown>, answer?: unknown) {
  const before = new Set((await server.person.openAsks()).asks.map((m) => m.id))
  const call = client.callTool({ name: 'approve', arguments: args }) as Promise<{
    isError?: boolean
    content: { type: string; text: string }[]
  }>
  let question: Message | undefined
  for (let i = 0; i < 300 && !question; i++) {
    question = (await server.person.openAsks()).asks.find((m) => !before.has(m.id))
    if (!question) await Bun.sleep(10)
  }
  if (!question) throw new Error('approve asked nothing')
  if (answer !== undefined) await server.person.answer(question.id, answer)
  const result = await call
  expect(result.content.length).toBe(1)
  expect(result.content[0]?.type).toBe('text')
  return { result, question, data: JSON.parse(result.content[0]?.text ?? '') }
}

const bash = { tool_name: 'Bash', input: { command: 'make deploy', description: 'Deploy' } }

describe('MCP approve (--permission-prompt-tool)', () => {
  test('allow: behavior allow with the input unchanged', async () => {
    const { data, question } = await approve(bash, { decision: 'allow' })
    expect(data).toEqual({ behavior: 'allow', updatedInput: bash.input })
    expect(question.body.blocks?.[0]).toMatchObject({
      type: 'approval',
      tool: 'Bash',
      input: bash.input,
      scopes: ['once'],
    } as Block)
  })

  test("deny: behavior deny with the person's message", async () => {
    const { data } = await approve(bash, { decision: 'deny', message: 'not on Friday' })
    expect(data).toEqual({ behavior: 'deny', message: 'not on Friday' })
  })

  test('no answer in time: deny saying so, and the question expired then', async () => {
    const { data, question, result } = await approve(bash)
    expect(result.isError).not.toBe(true)
    expect(data).toEqual({
      behavior: 'deny',
      message: 'Not allowed: no answer from the person within 2 s.',
    })
    const read = await server.agent.ask(question.id)
    expect(read.message.ask?.status).toBe('expired')
  })

  test('AskUserQuestion: answers in updatedInput.answers, keyed by question', async () => {
    const input = {
      questions: [
        {
          question: 'Which database?',
          header: 'DB',
          multiSelect: false,
          options: [
            { label: 'SQLite', description: 'embedded' },
            { label: 'Postgres', description: 'a server' },
          ],
        },
        {
          question: 'Which checks?',
          header: 'Checks',
          multiSelect: true,
          options: [
            { label: 'lint', description: '' },
            { label: 'types', description: '' },
          ],
        },
      ],
    }
    const { data, question } = await approve(
      { tool_name: 'AskUserQuestion', input },
      { q0: 'Postgres', q1: ['lint', 'types'] },
    )
    expect(question.body.blocks?.map((b) => b.type)).toEqual(['choice', 'choice'])
    expect(data).toEqual({
      behavior: 'allow',
      updatedInput: {
        ...input,
        answers: { 'Which database?': 'Postgres', 'Which checks?': 'lint, types' },
      },
    })
  })

  test("the card names Claude Code's session; the hooks' PostToolUse withdraws it", async () => {
    // Hark's hooks installed too: Claude Code asks both, the hook's answer wins and the tool
    // runs; this card must not stay open on the phone.
    const before = new Set((await server.person.openAsks()).asks.map((m) => m.id))
    const call = client.callTool({ name: 'approve', arguments: bash })
    let card: Message | undefined
    const pending = join(home, '.local', 'state', 'hark', 'pending')
    while (!card || !existsSync(pending) || readdirSync(pending).length === 0) {
      card = (await server.person.openAsks()).asks.find((m) => !before.has(m.id))
      await Bun.sleep(10)
    }
    expect(card.body.blocks?.[0]).toMatchObject({ type: 'approval', session: 'session-mcp' })
    const post = Bun.spawn(
      [process.execPath, join(import.meta.dir, '..', '..', 'src', 'main.ts'), 'hook', 'claude'],
      {
        env: {
          HOME: home,
          HARK_URL: server.url,
          HARK_TOKEN: server.agentToken,
          HARK_ALLOW_UNSIGNED: '1',
        },
        stdin: new TextEncoder().encode(
          JSON.stringify({
            hook_event_name: 'PostToolUse',
            session_id: 'session-mcp',
            tool_name: bash.tool_name,
            tool_input: bash.input,
            tool_response: {},
          }),
        ),
      },
    )
    expect(await post.exited).toBe(0)
    expect((await server.agent.ask(card.id)).message.ask).toMatchObject({
      status: 'cancelled',
      reason: 'answered in the terminal',
    })
    // Claude Code has dropped this call by then; it ends without an allow all the same.
    const result = (await call) as { content: { text: string }[] }
    expect(JSON.parse(result.content[0]?.text ?? '').behavior).toBe('deny')
  })

  test('bad arguments are a tool error naming the field; nothing is asked', async () => {
    const before = (await server.person.openAsks()).asks.length
    const result = (await client.callTool({ name: 'approve', arguments: { input: {} } })) as {
      isError?: boolean
      content: { text: string }[]
    }
    expect(result.isError).toBe(true)
    expect(result.content[0]?.text).toContain('tool_name')
    expect((await server.person.openAsks()).asks.length).toBe(before)
  })
})
