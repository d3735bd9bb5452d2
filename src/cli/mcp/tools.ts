import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import * as z from 'zod'
import { composeBody, composeQuestion, progressBody, uploadPath } from '../../agent/bodies.ts'
import { describeFailure } from '../../agent/failures.ts'
import { Inbox } from '../../agent/inbox.ts'
import type { Env } from '../../agent/profiles.ts'
import {
  askForSecret,
  type PendingSecret,
  waitForSecret,
  writeSecretFile,
} from '../../agent/secrets.ts'
import type { Session } from '../../agent/session.ts'
import { type AskOutcome, waitForAnswer } from '../../agent/waiting.ts'
import type { Block } from '../../messages/schema.ts'

/**
 * The MCP tools: the CLI's commands for a model. Every wait is at most 45 s, inside the 60 s an
 * MCP client usually allows a call; a question still open then comes back as data (`status:
 * "pending"`), never as an error, and `wait_for_answer` picks it up again.
 */
export const MAX_TOOL_WAIT_SECONDS = 45

const blocks = z
  .array(z.looseObject({ type: z.string() }))
  .optional()
  .describe('Hark content blocks (markdown, code, table, progress, image, choice, ...) as JSON')
const waitSeconds = z
  .number()
  .min(0)
  .max(MAX_TOOL_WAIT_SECONDS)
  .optional()
  .describe(`how long to wait, in seconds (default and most ${MAX_TOOL_WAIT_SECONDS})`)

const data = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value) }],
})

/** Runs a tool's work; failures come back as a tool error with a readable message. */
function handler<A>(work: (args: A) => Promise<unknown>) {
  return async (args: A): Promise<CallToolResult> => {
    try {
      return data(await work(args))
    } catch (error) {
      return { isError: true, content: [{ type: 'text', text: describeFailure(error).message }] }
    }
  }
}

/** A wait's outcome for a model: a timeout is `pending`, with what to do next. */
const toolOutcome = (o: AskOutcome) =>
  o.status === 'timeout'
    ? { id: o.id, status: 'pending', next: 'call wait_for_answer with this id to keep waiting' }
    : o

const waitMs = (seconds: number | undefined) => (seconds ?? MAX_TOOL_WAIT_SECONDS) * 1000

/**
 * Where `request_secret` writes a secret when not told: a fresh 0700 directory of its own,
 * the file named after the secret (made safe for a file name).
 */
function defaultSecretPath(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'hark-secret-'))
  return join(dir, name.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '_') || 'secret')
}

export function registerTools(server: McpServer, session: Session, env: Env): void {
  const { client } = session
  /** Requests still waiting, with their private keys: only this process can open the answer. */
  const pendingSecrets = new Map<string, { pending: PendingSecret; path?: string }>()

  server.registerTool(
    'notify',
    {
      description:
        'Send the person a message (a push notification on their phone unless silent). Use it for results, progress worth knowing, or anything they should see.',
      inputSchema: {
        text: z.string().optional(),
        title: z.string().optional(),
        markdown: z.string().optional().describe('markdown content, shown formatted'),
        blocks,
        files: z.array(z.string()).optional().describe('local paths to upload and attach'),
        images: z.array(z.string()).optional().describe('local image paths to upload and show'),
        silent: z.boolean().optional(),
      },
    },
    handler(async (a) => {
      const body = await composeBody(client, { ...a, blocks: a.blocks as Block[] | undefined })
      const { message } = await client.send({ body, silent: a.silent })
      return { id: message.id }
    }),
  )

  server.registerTool(
    'ask',
    {
      description: `Ask the person a question and wait up to ${MAX_TOOL_WAIT_SECONDS} s for the answer. Give at least one input: choices, confirm, text_input, number_input, toggle, or input blocks. Returns {id, status, answer}; status "pending" means no answer yet: call wait_for_answer with the id.`,
      inputSchema: {
        question: z.string().describe('the question, as text'),
        title: z.string().optional(),
        choices: z.array(z.string()).optional().describe('options to pick from'),
        multi: z.boolean().optional().describe('allow picking several choices'),
        confirm: z.string().optional().describe('the label of a button to press'),
        text_input: z.string().optional().describe('the label of a typed answer'),
        number_input: z.string().optional().describe('the label of a number answer'),
        toggle: z.string().optional().describe('the label of an on/off answer'),
        blocks,
        expires_in: z
          .number()
          .positive()
          .optional()
          .describe('seconds until the question expires and its defaults become the answer'),
        silent: z.boolean().optional(),
        wait_seconds: waitSeconds,
      },
    },
    handler(async (a) => {
      const one = (label: string | undefined) => (label === undefined ? [] : [label])
      const body = await composeQuestion(client, {
        text: a.question,
        title: a.title,
        blocks: a.blocks as Block[] | undefined,
        choices: a.choices ? [{ options: a.choices, multi: a.multi }] : [],
        confirms: one(a.confirm),
        texts: one(a.text_input),
        numbers: one(a.number_input),
        toggles: one(a.toggle),
      })
      const { message } = await client.send({
        body,
        silent: a.silent,
        expires_in: a.expires_in,
      })
      return toolOutcome(await waitForAnswer(client, message.id, waitMs(a.wait_seconds)))
    }),
  )

  server.registerTool(
    'wait_for_answer',
    {
      description: `Wait up to ${MAX_TOOL_WAIT_SECONDS} s for the answer to a question asked earlier. Safe to call again and again: status "pending" means not answered yet.`,
      inputSchema: { id: z.string(), wait_seconds: waitSeconds },
    },
    handler(async (a) => toolOutcome(await waitForAnswer(client, a.id, waitMs(a.wait_seconds)))),
  )

  server.registerTool(
    'cancel',
    {
      description: 'Withdraw an open question (it is no longer offered to the person).',
      inputSchema: { id: z.string() },
    },
    handler(async (a) => {
      const { message } = await client.cancel(a.id)
      return { id: message.id, status: message.ask?.status }
    }),
  )

  server.registerTool(
    'read_messages',
    {
      description:
        'Read what the person wrote to you since the last read (marks it seen unless peek). Optionally wait for a message. Acknowledge with acknowledge(id, "working" | "done").',
      inputSchema: {
        peek: z.boolean().optional().describe('do not mark the messages seen'),
        wait_seconds: waitSeconds.describe(
          `when nothing is new, wait up to this many seconds (default 0, most ${MAX_TOOL_WAIT_SECONDS})`,
        ),
      },
    },
    handler(async (a) => {
      const inbox = new Inbox(client, env, session.token, { peek: a.peek })
      const messages = await inbox.next({ deadline: Date.now() + (a.wait_seconds ?? 0) * 1000 })
      return {
        messages: messages.map((m) => ({
          id: m.id,
          created_at: m.created_at,
          state: m.state ?? null,
          ...m.body,
        })),
      }
    }),
  )

  server.registerTool(
    'acknowledge',
    {
      description: "Tell the person where their message stands: 'seen', 'working' or 'done'.",
      inputSchema: { id: z.string(), state: z.enum(['seen', 'working', 'done']) },
    },
    handler(async (a) => {
      const { message } = await client.ack(a.id, a.state)
      return { id: message.id, state: message.state }
    }),
  )

  server.registerTool(
    'pin',
    {
      description:
        'Create or replace a pinned status message under a key (shown above the conversation): build status, current task, checklist.',
      inputSchema: {
        key: z.string().describe('letters, digits, . _ - :'),
        text: z.string().optional(),
        title: z.string().optional(),
        markdown: z.string().optional(),
        blocks,
        silent: z.boolean().optional(),
      },
    },
    handler(async (a) => {
      const body = await composeBody(client, { ...a, blocks: a.blocks as Block[] | undefined })
      const { pin } = await client.pin(a.key, { body, silent: a.silent })
      return { key: pin.key, id: pin.message.id }
    }),
  )

  server.registerTool(
    'unpin',
    { description: 'Remove the pinned message under a key.', inputSchema: { key: z.string() } },
    handler(async (a) => client.unpin(a.key)),
  )

  server.registerTool(
    'progress',
    {
      description:
        'Show or move a progress bar pinned under a key (silent: no notification). Remove it with unpin.',
      inputSchema: {
        key: z.string(),
        value: z.number(),
        max: z.number().positive().optional(),
        label: z.string().optional(),
        title: z.string().optional(),
      },
    },
    handler(async (a) => {
      const { pin } = await client.pin(a.key, { body: progressBody(a), silent: true })
      return { key: pin.key, id: pin.message.id }
    }),
  )

  server.registerTool(
    'request_secret',
    {
      description: `Ask the person for a secret (API token, password), end-to-end encrypted: only this process can decrypt it. The secret is written to a file with mode 0600 and only its path is returned — the value never enters this conversation; read the file from the command that needs it (e.g. TOKEN=$(cat PATH) cmd). Tell the person the fingerprint so they can check the app shows the same. Waits up to ${MAX_TOOL_WAIT_SECONDS} s; status "pending" means call request_secret again with the id (same process) to keep waiting.`,
      inputSchema: {
        name: z
          .string()
          .optional()
          .describe('what is needed, e.g. GITHUB_TOKEN (for a new request)'),
        description: z.string().optional().describe('why it is needed, shown to the person'),
        path: z
          .string()
          .optional()
          .describe('where to write it (mode 0600); default: a new private temporary directory'),
        id: z.string().optional().describe('a pending request to keep waiting for'),
        wait_seconds: waitSeconds,
      },
    },
    handler(async (a) => {
      let entry = a.id === undefined ? undefined : pendingSecrets.get(a.id)
      if (a.id !== undefined && !entry) {
        throw new Error(`no pending secret request ${a.id} in this MCP server; ask again`)
      }
      if (!entry) {
        if (!a.name) throw new Error('give the name of the secret (or the id of a pending request)')
        entry = { pending: await askForSecret(client, a.name, a.description), path: a.path }
        pendingSecrets.set(entry.pending.request.id, entry)
      }
      const { request } = entry.pending
      const outcome = await waitForSecret(client, entry.pending, waitMs(a.wait_seconds))
      if (outcome.status === 'timeout') {
        return {
          id: request.id,
          status: 'pending',
          fingerprint: request.fingerprint,
          next: 'tell the person this fingerprint, then call request_secret with this id',
        }
      }
      pendingSecrets.delete(request.id)
      if (outcome.status === 'cancelled') return { id: request.id, status: 'cancelled' }
      const path = a.path ?? entry.path ?? defaultSecretPath(request.name)
      writeSecretFile(path, outcome.value)
      return { id: request.id, status: 'received', name: request.name, path }
    }),
  )

  server.registerTool(
    'upload',
    {
      description:
        'Upload a local file to the channel; returns its file_id for image or file blocks.',
      inputSchema: {
        path: z.string(),
        name: z.string().optional(),
        mime: z.string().optional(),
      },
    },
    handler(async (a) => uploadPath(client, a.path, { name: a.name, mime: a.mime })),
  )
}
