import * as z from 'zod'
import { uploadPath } from '../../agent/bodies.ts'
import { CliError } from '../../agent/failures.ts'
import { Inbox } from '../../agent/inbox.ts'
import { ACK_STATES, pinMessage, sendMessage, showProgress } from '../../agent/messages.ts'
import { askQuestion, waitForAnswer } from '../../agent/questions.ts'
import { secretPageUrl } from '../../agent/secret-page.ts'
import {
  type PendingSecret,
  privateSecretPath,
  requestSecret,
  type SecretOutcome,
  secretCheck,
  waitForSecret,
  writeSecretFile,
} from '../../agent/secrets.ts'
import { UsageError } from '../../core/errors.ts'
import type { Block } from '../../messages/schema.ts'
import { allowsUnsigned } from '../harness/hook.ts'
import { approve } from './approve.ts'
import { blocksArgument } from './blocks.ts'
import { withdrawOnCancel } from './call.ts'
import { linkBase, offerSecretPage, offersLinks } from './secret-page.ts'
import {
  MAX_TOOL_WAIT_SECONDS,
  type McpTool,
  type ToolContext,
  tool,
  toolOutcome,
  waitMs,
  waitSecondsArgument,
} from './tool.ts'

/**
 * The MCP tools: the CLI's commands for a model. Each translates its arguments into a call of
 * the agent SDK (src/agent), as the CLI's commands do, and returns the outcome as data.
 */

const notify = tool({
  name: 'notify',
  description:
    'Send the person a message (a push notification on their phone unless silent). Use it for results, progress worth knowing, or anything they should see.',
  inputSchema: {
    text: z.string().optional(),
    title: z.string().optional(),
    markdown: z.string().optional().describe('markdown content, shown formatted'),
    blocks: blocksArgument,
    files: z.array(z.string()).optional().describe('local paths to upload and attach'),
    images: z.array(z.string()).optional().describe('local image paths to upload and show'),
    silent: z.boolean().optional(),
  },
  async run(a, { client }) {
    const spec = { ...a, blocks: a.blocks as Block[] | undefined }
    const { message } = await sendMessage(client, spec, { silent: a.silent })
    return { id: message.id }
  },
})

const ask = tool({
  name: 'ask',
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
    blocks: blocksArgument,
    expires_in: z
      .number()
      .positive()
      .optional()
      .describe('seconds until the question expires and its defaults become the answer'),
    silent: z.boolean().optional(),
    wait_seconds: waitSecondsArgument,
  },
  showsImages: true,
  async run(a, { client }, call) {
    const one = (label: string | undefined) => (label === undefined ? [] : [label])
    const question = {
      text: a.question,
      title: a.title,
      blocks: a.blocks as Block[] | undefined,
      choices: a.choices ? [{ options: a.choices, multi: a.multi }] : [],
      confirms: one(a.confirm),
      texts: one(a.text_input),
      numbers: one(a.number_input),
      toggles: one(a.toggle),
    }
    const timeoutMs = waitMs(a.wait_seconds)
    // A cancelled call withdraws its question: nobody is left to read the answer.
    const cancel = withdrawOnCancel(call, client)
    let stop = () => {}
    try {
      const outcome = await askQuestion(client, question, {
        silent: a.silent,
        expiresIn: a.expires_in,
        timeoutMs,
        signal: call.signal,
        onAsked: (message) => {
          cancel.asked(message.id)
          stop = call.waiting(`asked ${message.id}; waiting for the person`, timeoutMs / 1000)
        },
      })
      return toolOutcome(outcome)
    } finally {
      stop()
      cancel.done()
    }
  },
})

const waitForAnswerTool = tool({
  name: 'wait_for_answer',
  description: `Wait up to ${MAX_TOOL_WAIT_SECONDS} s for the answer to a question asked earlier. Safe to call again and again: status "pending" means not answered yet.`,
  inputSchema: { id: z.string(), wait_seconds: waitSecondsArgument },
  showsImages: true,
  async run(a, { client }, call) {
    // A cancelled wait only stops waiting: the question was left open on purpose by an earlier
    // call (and a client's own request timeout cancels too); the cancel tool withdraws it.
    const timeoutMs = waitMs(a.wait_seconds)
    const stop = call.waiting(`waiting for the person to answer ${a.id}`, timeoutMs / 1000)
    try {
      return toolOutcome(await waitForAnswer(client, a.id, timeoutMs, undefined, call.signal))
    } finally {
      stop()
    }
  },
})

const cancel = tool({
  name: 'cancel',
  description: 'Withdraw an open question (it is no longer offered to the person).',
  inputSchema: { id: z.string() },
  async run(a, { client }) {
    const { message } = await client.cancel(a.id)
    return { id: message.id, status: message.ask?.status }
  },
})

const readMessages = tool({
  name: 'read_messages',
  description:
    'Read what the person wrote to you since the last read (marks it seen unless peek). Optionally wait for a message. Acknowledge with acknowledge(id, "working" | "done").',
  inputSchema: {
    peek: z.boolean().optional().describe('do not mark the messages seen'),
    wait_seconds: waitSecondsArgument.describe(
      `when nothing is new, wait up to this many seconds (default 0, most ${MAX_TOOL_WAIT_SECONDS})`,
    ),
  },
  showsImages: true,
  async run(a, { session, env }) {
    // A model sees no stderr: a place that could not be kept is said in the result.
    let warning: string | undefined
    const inbox = new Inbox(session, env, { peek: a.peek, onWarning: (w) => (warning = w) })
    const messages = await inbox.read((a.wait_seconds ?? 0) * 1000)
    return {
      messages: messages.map((m) => ({
        id: m.id,
        created_at: m.created_at,
        state: m.state ?? null,
        ...m.body,
      })),
      ...(warning === undefined ? {} : { warning }),
    }
  },
})

const acknowledge = tool({
  name: 'acknowledge',
  description: "Tell the person where their message stands: 'seen', 'working' or 'done'.",
  inputSchema: { id: z.string(), state: z.enum(ACK_STATES) },
  async run(a, { client }) {
    const { message } = await client.ack(a.id, a.state)
    return { id: message.id, state: message.state }
  },
})

const pin = tool({
  name: 'pin',
  description:
    'Create or replace a pinned status message under a key (shown above the conversation): build status, current task, checklist.',
  inputSchema: {
    key: z.string().describe('letters, digits, . _ - :'),
    text: z.string().optional(),
    title: z.string().optional(),
    markdown: z.string().optional(),
    blocks: blocksArgument,
    silent: z.boolean().optional(),
  },
  async run(a, { client }) {
    const spec = { ...a, blocks: a.blocks as Block[] | undefined }
    const { pin } = await pinMessage(client, a.key, spec, { silent: a.silent })
    return { key: pin.key, id: pin.message.id }
  },
})

const unpin = tool({
  name: 'unpin',
  description: 'Remove the pinned message under a key.',
  inputSchema: { key: z.string() },
  run: (a, { client }) => client.unpin(a.key),
})

const progress = tool({
  name: 'progress',
  description:
    'Show or move a progress bar pinned under a key (silent: no notification). Remove it with unpin.',
  inputSchema: {
    key: z.string(),
    value: z.number(),
    max: z.number().positive().optional(),
    label: z.string().optional(),
    title: z.string().optional(),
  },
  async run(a, { client }) {
    const { pin } = await showProgress(client, a.key, a)
    return { key: pin.key, id: pin.message.id }
  },
})

/** A secret request's outcome for a model: the value stays in its file, only the path is told. */
function secretResult(
  c: ToolContext,
  request: PendingSecret['request'],
  outcome: SecretOutcome,
  path: string | undefined,
) {
  const page = c.pendingSecrets.get(request.id)?.page
  if (outcome.status === 'timeout') {
    return {
      id: request.id,
      status: 'pending',
      fingerprint: request.fingerprint,
      next: 'tell the person this fingerprint, then call request_secret with this id',
    }
  }
  c.pendingSecrets.delete(request.id)
  page?.settle()
  if (outcome.status === 'cancelled') {
    return page?.declined
      ? { id: request.id, status: 'cancelled', reason: 'the person declined at the terminal' }
      : { id: request.id, status: 'cancelled' }
  }
  const target = path ?? privateSecretPath(request.name)
  writeSecretFile(target, outcome.value)
  return { id: request.id, status: 'received', name: request.name, path: target }
}

/**
 * Runs a secret's wait; when it fails (a ciphertext not signed by the person, one that does not
 * open) the link offered for it is closed at the client, as for an outcome.
 */
async function closingPageOnError<T>(
  c: ToolContext,
  id: string | (() => string | undefined),
  wait: () => Promise<T>,
): Promise<T> {
  try {
    return await wait()
  } catch (error) {
    const which = typeof id === 'string' ? id : id()
    if (which !== undefined) c.pendingSecrets.get(which)?.page?.settle()
    throw error
  }
}

const requestSecretTool = tool({
  name: 'request_secret',
  description: `Ask the person for a secret (API token, password), end-to-end encrypted: only this process can decrypt it. The secret is written to a file with mode 0600 and only its path is returned — the value never enters this conversation; read the file from the command that needs it (e.g. TOKEN=$(cat PATH) cmd). Tell the person the fingerprint so they can check the app shows the same. A client that can open links (URL elicitation) also offers the person the app's page for it. Waits up to ${MAX_TOOL_WAIT_SECONDS} s; status "pending" means call request_secret again with the id (same process) to keep waiting.`,
  inputSchema: {
    name: z.string().optional().describe('what is needed, e.g. GITHUB_TOKEN (for a new request)'),
    description: z.string().optional().describe('why it is needed, shown to the person'),
    path: z
      .string()
      .optional()
      .describe('where to write it (mode 0600); default: a new private temporary directory'),
    id: z.string().optional().describe('a pending request to keep waiting for'),
    wait_seconds: waitSecondsArgument,
  },
  async run(a, c) {
    const timeoutMs = waitMs(a.wait_seconds)
    // The person's passkey over the ciphertext, checked before it is opened (HARK_ALLOW_UNSIGNED
    // turns this off, as for approvals).
    const verify = allowsUnsigned(false, c.env) ? undefined : secretCheck(c.env, c.session.profile)
    if (a.id !== undefined) {
      const entry = c.pendingSecrets.get(a.id)
      if (!entry) {
        throw new CliError(`no pending secret request ${a.id} in this MCP server; ask again`)
      }
      const outcome = await closingPageOnError(c, a.id, () =>
        waitForSecret(c.client, entry.pending, timeoutMs, undefined, verify),
      )
      return secretResult(c, entry.pending.request, outcome, a.path ?? entry.path)
    }
    const name = a.name
    if (!name) {
      throw new UsageError('give the name of the secret (or the id of a pending request)')
    }
    const baseUrl = offersLinks(c.mcp) ? await linkBase(c.client, c.session.url) : undefined
    let asked: string | undefined
    const { pending, outcome } = await closingPageOnError(
      c,
      () => asked,
      () =>
        requestSecret(c.client, name, a.description, {
          timeoutMs,
          verify,
          // Kept before the wait: a later call with the id resumes it with the same private key.
          onAsked: (made) => {
            const { request } = made
            asked = request.id
            const page =
              baseUrl === undefined
                ? undefined
                : offerSecretPage(c.mcp, c.client, request, secretPageUrl(baseUrl, request))
            c.pendingSecrets.set(request.id, { pending: made, path: a.path, page })
          },
        }),
    )
    return secretResult(c, pending.request, outcome, a.path)
  },
})

const upload = tool({
  name: 'upload',
  description: 'Upload a local file to the channel; returns its file_id for image or file blocks.',
  inputSchema: {
    path: z.string(),
    name: z.string().optional(),
    mime: z.string().optional(),
  },
  run: (a, { client }) => uploadPath(client, a.path, { name: a.name, mime: a.mime }),
})

/** Every tool `hark mcp` offers, in the order it lists them. */
export const TOOLS: readonly McpTool[] = [
  notify,
  ask,
  waitForAnswerTool,
  cancel,
  readMessages,
  acknowledge,
  pin,
  unpin,
  progress,
  requestSecretTool,
  upload,
  approve,
]
