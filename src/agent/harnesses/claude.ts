import { createHash } from 'node:crypto'
import type { Block, Message } from '../../messages/schema.ts'
import type { ApprovalAnswer } from '../../shared/blocks.ts'
import { approvalRequest } from '../../shared/canonical.ts'
import { type Action, approvalBlock, suggestionText, titleOf } from '../actions.ts'
import { askPerson, type Reply, withdraw } from '../person.ts'
import { byPolicy } from '../policy.ts'
import { isSecretPageOffer } from '../secret-page.ts'
import { questionHash, warnUnsigned } from '../trust.ts'
import type { HookDeps, HookEvent, HookOutput } from './deps.ts'
import { elicitationForm, elicitationReply } from './elicitation.ts'
import type { PendingApprovals } from './pending.ts'
import { unsignedAllow } from './unsigned.ts'

/**
 * Claude Code's hook events, answered by the person through Hark (PRODUCT.md "Agent harnesses";
 * the shapes are Claude Code's, `@anthropic-ai/claude-agent-sdk` HookInput / SyncHookJSONOutput).
 * A function of the event returns what the hook prints, or undefined to print nothing: Claude
 * Code then decides as it would without the hook (its own prompt). Never an allow without the
 * person's answer.
 */
export type { HookDeps, HookEvent, HookOutput }

/** Input the hook cannot act on: it says so on stderr and decides nothing. */
export class BadHookInput extends Error {}

const str = (event: HookEvent, key: string): string | undefined =>
  typeof event[key] === 'string' ? (event[key] as string) : undefined

const need = (event: HookEvent, key: string): string => {
  const value = str(event, key)
  if (value === undefined) throw new BadHookInput(`the event has no "${key}"`)
  return value
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** Why a withdrawn approval was withdrawn, as the person reads it in the app. */
export const DECIDED_IN_TERMINAL = 'answered in the terminal'

export async function claudeHook(
  event: HookEvent,
  deps: HookDeps,
): Promise<HookOutput | undefined> {
  const name = need(event, 'hook_event_name')
  switch (name) {
    case 'PermissionRequest':
      return need(event, 'tool_name') === 'AskUserQuestion'
        ? askUserQuestion(event, deps)
        : permissionRequest(event, deps)
    case 'Elicitation':
      return elicitation(event, deps)
    case 'Notification':
      await notification(event, deps)
      return undefined
    case 'Stop':
      return stop(event, deps)
    // The action was decided in the terminal (it ran, failed or was refused there): Claude Code
    // does not signal the hook still waiting for the phone, so these withdraw its question.
    case 'PostToolUse':
    case 'PostToolUseFailure':
    case 'PermissionDenied':
      await withdrawDecided(event, deps)
      return undefined
    default:
      throw new BadHookInput(`"${name}" is not an event hark handles`)
  }
}

const permissionOutput = (decision: Record<string, unknown>): HookOutput => ({
  hookSpecificOutput: { hookEventName: 'PermissionRequest', decision },
})

/**
 * The key an open question is tracked under, so that `PostToolUse` finds the one for the action
 * that just ran: the hash of the tool and its input (an approval's `request_hash`). For
 * AskUserQuestion only its `questions` count: the input that reaches `PostToolUse` also carries
 * the `answers` given in the terminal, and it must still find the card Hark put on the phone.
 */
function actionKey(tool: string, input: unknown): string {
  const asked =
    tool === 'AskUserQuestion' && typeof input === 'object' && input !== null
      ? { questions: (input as { questions?: unknown }).questions ?? null }
      : input
  return sha256(approvalRequest(tool, asked ?? null))
}

/** The key of a card the channel relay put up (src/cli/channel/relay.ts): it knows the tool but
 * only a preview of the input, so a card is withdrawn when any call of its tool has run. */
export const channelKey = (tool: string) => `channel:${tool}`

/** What a question came to: a reply, or an answer that was not signed (taken as none). */
type Asked = Reply | { status: 'untrusted'; message: Message; reason: string }

/**
 * A question asked for a session: tracked as open until it is settled, then forgotten. `key`
 * ties it to its action (actionKey); questions of no tool (Elicitation, Stop) have none. With
 * `signed` (every question but an approval, which is always signed) it is asked with proof and
 * its answer counts only with the person's signature over it: the Stop reply, AskUserQuestion
 * and elicitation answers steer the agent as much as an allow does.
 */
async function askTracked(
  event: HookEvent,
  deps: HookDeps,
  body: { title: string; blocks: Block[] },
  key = '',
  signed = false,
): Promise<Asked> {
  const pending = deps.pending(str(event, 'session_id') ?? '')
  const verify = signed ? deps.verifyAnswer : undefined
  const askedAt = Date.now()
  let id: string | undefined
  deps.onSending()
  let reply: Reply
  try {
    reply = await askPerson(deps.client(), body, {
      waitMs: deps.waitMs,
      onOutage: deps.warn,
      proof: verify !== undefined,
      onAsked: (message) => {
        id = message.id
        pending.add(message.id, key)
        deps.onAsked(message)
      },
    })
  } finally {
    if (id) pending.remove(id)
  }
  if (!verify || reply.status !== 'answered') return reply
  const check = verify(reply.message, reply.answer, questionHash(body), askedAt)
  if (check.ok) return reply
  // From the phone it looked answered: said on stderr and in the channel.
  deps.warn(`the answer is not trusted (${check.reason}): taken as no answer`)
  await warnUnsigned(deps.client(), `The answer to "${body.title}"`, check.reason)
  return { status: 'untrusted', message: reply.message, reason: check.reason }
}

function noAnswer(reply: Asked, deps: HookDeps): undefined {
  // An untrusted answer was said already (askTracked).
  if (reply.status === 'untrusted') return undefined
  const why =
    reply.status === 'timeout'
      ? `no answer within ${Math.round(deps.waitMs / 1000)} s; the question ${reply.message.ask?.status === 'expired' ? 'expired' : 'was withdrawn'}`
      : `the question was ${reply.status}`
  deps.warn(`${why}: Claude Code decides as it would without hark`)
  return undefined
}

/** PermissionRequest → an approval; allow, allow for the session, or deny with a message. */
async function permissionRequest(event: HookEvent, deps: HookDeps) {
  const suggestions = Array.isArray(event.permission_suggestions)
    ? (event.permission_suggestions as Record<string, unknown>[])
    : []
  const action: Action = {
    tool: need(event, 'tool_name'),
    input: event.tool_input ?? null,
    cwd: str(event, 'cwd'),
    session: str(event, 'session_id'),
    sessionScope: suggestions.length > 0,
    sessionRules: suggestions
      .map(suggestionText)
      .filter((t) => t !== '')
      .slice(0, 20),
    agent: 'Claude Code',
  }
  const ruled = await byPolicy(deps, action)
  if (ruled) return permissionOutput(ruled)
  const askedAt = Date.now()
  const reply = await askTracked(
    event,
    deps,
    { title: titleOf(action), blocks: [approvalBlock(action)] },
    actionKey(action.tool, action.input),
  )
  if (reply.status !== 'answered') return noAnswer(reply, deps)
  const answer = reply.answer as ApprovalAnswer
  if (answer?.decision === 'allow') {
    // No valid signature: nothing decided, and Claude Code's own prompt takes over.
    if (await unsignedAllow(deps, reply.message, answer, action, askedAt)) return undefined
    if (answer.scope !== 'session' || suggestions.length === 0) {
      return permissionOutput({ behavior: 'allow' })
    }
    // "Allow for this session" is what the person tapped: Claude Code's suggestions (which may
    // name a settings file, to remember it for ever) are applied to this session only.
    const updatedPermissions = suggestions.map((s) => ({ ...s, destination: 'session' }))
    return permissionOutput({ behavior: 'allow', updatedPermissions })
  }
  if (answer?.decision === 'deny') {
    const message = answer.message?.trim() || 'The person denied this from Hark.'
    return permissionOutput({ behavior: 'deny', message })
  }
  deps.warn('the answer is not an approval decision: nothing decided')
  return undefined
}

interface AskedQuestion {
  question: string
  header?: string
  multiSelect?: boolean
  options: { label: string; description?: string }[]
}

/** AskUserQuestion (arriving as a permission request) → one choice per question. */
async function askUserQuestion(event: HookEvent, deps: HookDeps) {
  const input = (event.tool_input ?? {}) as { questions?: unknown }
  if (!Array.isArray(input.questions) || input.questions.length === 0) {
    throw new BadHookInput('AskUserQuestion has no questions')
  }
  const questions = input.questions as AskedQuestion[]
  const blocks: Block[] = questions.map((q, i) => {
    if (typeof q?.question !== 'string' || !Array.isArray(q.options)) {
      throw new BadHookInput(`AskUserQuestion question ${i} has no question or options`)
    }
    return {
      type: 'choice',
      id: `q${i}`,
      label: q.header ? `${q.header}: ${q.question}` : q.question,
      options: q.options.map((o) => ({
        label: o.label,
        ...(o.description ? { description: o.description } : {}),
      })),
      multi: q.multiSelect === true,
      // Claude Code always offers "Other" with free text; so does Hark.
      other: true,
      required: true,
    }
  })
  const reply = await askTracked(
    event,
    deps,
    { title: 'Claude Code asks', blocks },
    actionKey('AskUserQuestion', input),
    true,
  )
  if (reply.status !== 'answered') return noAnswer(reply, deps)
  // One input answers with its value; several with an object keyed by block id.
  const values =
    questions.length === 1 ? { q0: reply.answer } : (reply.answer as Record<string, unknown>)
  const answers: Record<string, string> = {}
  questions.forEach((q, i) => {
    const v = values?.[`q${i}`]
    answers[q.question] = Array.isArray(v) ? v.join(', ') : String(v ?? '')
  })
  return permissionOutput({ behavior: 'allow', updatedInput: { ...input, answers } })
}

/** Elicitation → the schema's fields as inputs; sent → accept, declined → decline, else cancel. */
async function elicitation(event: HookEvent, deps: HookDeps) {
  const server = str(event, 'mcp_server_name') ?? 'an MCP server'
  const message = str(event, 'message') ?? ''
  const output = (reply: ReturnType<typeof elicitationReply>) => ({
    hookSpecificOutput: { hookEventName: 'Elicitation', ...reply },
  })
  if (str(event, 'mode') === 'url') {
    const url = need(event, 'url')
    if (isSecretPageOffer(url, str(event, 'elicitation_id'))) return undefined
    const reply = await askTracked(
      event,
      deps,
      {
        title: `${server} asks you to open a page`,
        blocks: [
          { type: 'markdown', text: message },
          { type: 'link', url },
          { type: 'confirm', id: 'done', label: 'Done' },
        ],
      },
      '',
      true,
    )
    return output(reply.status === 'answered' ? { action: 'accept' } : { action: 'cancel' })
  }
  const form = elicitationForm(event.requested_schema)
  const reply = await askTracked(
    event,
    deps,
    {
      title: `${server} asks`,
      blocks: [{ type: 'markdown', text: message || 'Fill this in:' }, ...form.blocks],
    },
    '',
    true,
  )
  if (reply.status !== 'answered') {
    noAnswer(reply, deps)
    return output({ action: 'cancel' })
  }
  const result = elicitationReply(form, reply.answer)
  if (
    result.action === 'decline' &&
    (reply.answer as Record<string, unknown>)?.hark_decision === 'accept'
  ) {
    deps.warn('a required field was left empty: the form was declined')
  }
  return output(result)
}

/** Claude Code's own notifications, except those Hark already turned into a question. */
const ASKED_ALREADY = new Set(['permission_prompt', 'elicitation_dialog'])

async function notification(event: HookEvent, deps: HookDeps) {
  if (ASKED_ALREADY.has(str(event, 'notification_type') ?? '')) return
  const text = need(event, 'message')
  await deps.client().send({ body: { title: str(event, 'title') ?? 'Claude Code', text } })
}

/** Stop → a message; with `--reply`, a question whose answer continues the session. */
async function stop(event: HookEvent, deps: HookDeps) {
  await withdrawAll(event, deps)
  const last = str(event, 'last_assistant_message')?.trim()
  const body = { title: 'Claude Code finished', text: last || 'Claude Code stopped.' }
  if (!deps.reply) {
    await deps.client().send({ body })
    return undefined
  }
  const reply = await askTracked(
    event,
    deps,
    {
      ...body,
      blocks: [
        {
          type: 'text_input',
          id: 'reply',
          label: 'Reply to continue the session',
          multiline: true,
          required: true,
        },
      ],
    },
    '',
    true,
  )
  if (reply.status !== 'answered' || typeof reply.answer !== 'string') return noAnswer(reply, deps)
  return { decision: 'block', reason: reply.answer }
}

/** The tool ran (or failed, or was refused): an approval still open for that exact action was
 * decided elsewhere. */
async function withdrawDecided(event: HookEvent, deps: HookDeps) {
  const tool = str(event, 'tool_name')
  if (!tool) return
  const pending = deps.pending(str(event, 'session_id') ?? '')
  const ids = pending.list(actionKey(tool, event.tool_input ?? null))
  await withdrawIds([...ids, ...pending.list(channelKey(tool))], pending, deps)
}

async function withdrawAll(event: HookEvent, deps: HookDeps) {
  const pending = deps.pending(str(event, 'session_id') ?? '')
  await withdrawIds(pending.list(), pending, deps)
}

async function withdrawIds(ids: string[], pending: PendingApprovals, deps: HookDeps) {
  // No network call at all when nothing is open: this runs after every tool.
  for (const id of ids) {
    await withdraw(deps.client(), id, DECIDED_IN_TERMINAL)
    pending.remove(id)
  }
}
