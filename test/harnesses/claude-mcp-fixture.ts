import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import * as z from 'zod'

/**
 * A tiny MCP stdio server of the tests' own, started by the real Claude Code (through
 * `--mcp-config`) next to Hark's. Run as `bun claude-mcp-fixture.ts`; `FIXTURE_DIR` is where the
 * test drops its signal files. Its tools:
 *   terminal  a `--permission-prompt-tool` standing in for the person answering in the terminal:
 *             it allows (an AskUserQuestion: picks each first option) as soon as the test drops
 *             `go`, so the test decides when (after Hark's hook has put its card on the phone).
 *   hold      a tool that returns only once the test drops `release`: the test looks at the
 *             world between a tool's end and the session's Stop.
 *   deploy    asks the person a form through `elicitation/create` (enum, integer, boolean) and
 *             returns what it received, as JSON, so the model's tool_result shows it.
 */

const dir = process.env.FIXTURE_DIR ?? '.'
/** Bounded: a test that never signals must still see this tool end. */
const SIGNAL_WAIT_MS = 20_000

const signalled = async (name: string) => {
  const deadline = Date.now() + SIGNAL_WAIT_MS
  while (!existsSync(join(dir, name))) {
    if (Date.now() > deadline) return false
    await Bun.sleep(20)
  }
  return true
}

const text = (value: unknown) => ({
  content: [{ type: 'text' as const, text: JSON.stringify(value) }],
})

const server = new McpServer({ name: 'fixture', version: '1.0.0' })

server.registerTool(
  'terminal',
  {
    description: 'Permission prompt: allows once the test says so.',
    inputSchema: {
      tool_name: z.string(),
      input: z.record(z.string(), z.unknown()),
      tool_use_id: z.string().optional(),
    },
  },
  async ({ tool_name, input }) => {
    if (!(await signalled('go'))) return text({ behavior: 'deny', message: 'fixture: no go' })
    if (tool_name !== 'AskUserQuestion') return text({ behavior: 'allow' })
    // The person picks each question's first option in the terminal.
    const questions = (input.questions ?? []) as {
      question: string
      options: { label: string }[]
    }[]
    const answers = Object.fromEntries(questions.map((q) => [q.question, q.options[0]?.label]))
    return text({ behavior: 'allow', updatedInput: { ...input, answers } })
  },
)

server.registerTool(
  'hold',
  { description: 'Returns once the test releases it.', inputSchema: {} },
  async () => text({ released: await signalled('release') }),
)

server.registerTool(
  'deploy',
  { description: 'Asks the person how to deploy.', inputSchema: {} },
  async () => {
    const result = await server.server.elicitInput({
      message: 'Deploy settings?',
      requestedSchema: {
        type: 'object',
        properties: {
          env: { type: 'string', title: 'Environment', enum: ['staging', 'prod'] },
          replicas: { type: 'integer', minimum: 1, maximum: 5 },
          confirm: { type: 'boolean', title: 'Confirm' },
        },
        required: ['env'],
      },
    })
    return text(result)
  },
)

await server.connect(new StdioServerTransport())
