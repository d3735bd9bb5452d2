import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod'
import type { AgentClient } from '../../agent/client.ts'
import { describeFailure } from '../../agent/failures.ts'
import type { Env } from '../../agent/profiles.ts'
import type { AskOutcome } from '../../agent/questions.ts'
import type { PendingSecret } from '../../agent/secrets.ts'
import type { Session } from '../../agent/session.ts'
import { type ToolCall, toolCall } from './call.ts'
import { imagesOf } from './images.ts'
import type { SecretPage } from './secret-page.ts'

/**
 * One MCP tool: its name, what the model reads about it, its arguments, and what it does; the
 * MCP counterpart of the CLI's `Command`. `run` returns data (sent as one JSON text) or throws
 * (sent as a tool error: one line, never a stack).
 */
export interface McpTool<Shape extends z.ZodRawShape = z.ZodRawShape> {
  name: string
  description: string
  inputSchema: Shape
  /** Images the result carries (blocks of messages, answers) are sent as image content too. */
  showsImages?: boolean
  run(args: z.infer<z.ZodObject<Shape>>, c: ToolContext, call: ToolCall): Promise<unknown>
}

/** Checks a tool's `run` against its own schema, then lets it stand in the table. */
export const tool = <Shape extends z.ZodRawShape>(definition: McpTool<Shape>) =>
  definition as unknown as McpTool

export interface ToolContext {
  session: Session
  client: AgentClient
  env: Env
  /** The protocol's server: what the connected client declared, requests to it. */
  mcp: Server
  /**
   * Secret requests still waiting, with their private keys (only this process can open them)
   * and the link offered to the person, when the client takes links (secret-page.ts).
   */
  pendingSecrets: Map<string, { pending: PendingSecret; path?: string; page?: SecretPage }>
  /** How often a waiting tool tells the client it is still waiting (call.ts). */
  progressEveryMs: number
}

/**
 * Every wait is at most 45 s, inside the 60 s an MCP client usually allows a call; a question
 * still open then comes back as data (`status: "pending"`), never as an error, and
 * `wait_for_answer` picks it up again.
 */
export const MAX_TOOL_WAIT_SECONDS = 45

export const waitSecondsArgument = z
  .number()
  .min(0)
  .max(MAX_TOOL_WAIT_SECONDS)
  .optional()
  .describe(`how long to wait, in seconds (default and most ${MAX_TOOL_WAIT_SECONDS})`)

export const waitMs = (seconds: number | undefined) => (seconds ?? MAX_TOOL_WAIT_SECONDS) * 1000

/** A wait's outcome for a model: a timeout is `pending`, with what to do next. */
export const toolOutcome = (o: AskOutcome) =>
  o.status === 'timeout'
    ? { id: o.id, status: 'pending', next: 'call wait_for_answer with this id to keep waiting' }
    : o

/** Registers each tool of the table; one context (and its pending secrets) serves them all. */
export function registerTools(
  server: McpServer,
  tools: readonly McpTool[],
  context: ToolContext,
): void {
  for (const t of tools) {
    server.registerTool(
      t.name,
      { description: t.description, inputSchema: t.inputSchema },
      async (args, extra): Promise<CallToolResult> => {
        try {
          const result = await t.run(args, context, toolCall(extra, context.progressEveryMs))
          const text = { type: 'text', text: JSON.stringify(result) } as const
          if (!t.showsImages) return { content: [text] }
          return { content: [text, ...(await imagesOf(context.client, result))] }
        } catch (error) {
          // A cancelled call's result is never sent (the SDK drops it): nothing to report.
          if (extra.signal.aborted)
            return { isError: true, content: [{ type: 'text', text: 'cancelled' }] }
          const failure = describeFailure(error)
          // The model reads one line. Where a bug happened goes to stderr, which the MCP
          // client keeps in its log (stdout is the protocol's).
          if (failure.detail) process.stderr.write(`hark mcp: ${t.name}: ${failure.detail}\n`)
          return { isError: true, content: [{ type: 'text', text: failure.message }] }
        }
      },
    )
  }
}
