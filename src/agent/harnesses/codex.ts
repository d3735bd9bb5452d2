import type { ApprovalAnswer } from '../../shared/blocks.ts'
import { type Action, approvalBlock, titleOf } from '../actions.ts'
import { askPerson } from '../person.ts'
import { byPolicy } from '../policy.ts'
import { BadHookInput, type HookDeps, type HookEvent, type HookOutput } from './claude.ts'
import { unsignedAllow } from './unsigned.ts'

/**
 * Codex's hooks (measured with @openai/codex 0.169.0; PRODUCT.md "Agent harnesses"): its
 * PermissionRequest hook speaks Claude Code's shapes, but a hook that decides nothing hands the
 * action to Codex's own model reviewer, not to a person. So here every outcome other than the
 * person's allow is a deny that says why: silence is never consent. Codex takes no
 * `updatedPermissions` (it treats the hook as failed), so its approvals offer only "once".
 * Its `notify` program gets a JSON argument after each turn: that becomes one message.
 */
export const codexDeny = (message: string): HookOutput => ({
  hookSpecificOutput: {
    hookEventName: 'PermissionRequest',
    decision: { behavior: 'deny', message },
  },
})

const str = (event: HookEvent, key: string) =>
  typeof event[key] === 'string' ? (event[key] as string) : undefined

export async function codexHook(event: HookEvent, deps: HookDeps): Promise<HookOutput | undefined> {
  // notify's JSON names its kind in `type`; hooks name theirs in `hook_event_name`.
  if (event.type === 'agent-turn-complete') {
    await turnComplete(event, deps)
    return undefined
  }
  const name = str(event, 'hook_event_name')
  if (name !== 'PermissionRequest') {
    throw new BadHookInput(`"${name ?? event.type}" is not an event hark handles for Codex`)
  }
  const tool = str(event, 'tool_name')
  if (!tool) throw new BadHookInput('the event has no "tool_name"')
  const action: Action = {
    tool,
    input: event.tool_input ?? null,
    cwd: str(event, 'cwd'),
    session: str(event, 'session_id'),
    agent: 'Codex',
  }
  const ruled = await byPolicy(deps, action)
  if (ruled?.behavior === 'deny') return codexDeny(ruled.message)
  if (ruled) return { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: ruled } }
  const pending = deps.pending(action.session ?? '')
  let id: string | undefined
  deps.onSending()
  const askedAt = Date.now()
  const reply = await askPerson(
    deps.client(),
    { title: titleOf(action), blocks: [approvalBlock(action)] },
    {
      waitMs: deps.waitMs,
      onOutage: deps.warn,
      onAsked: (message) => {
        id = message.id
        pending.add(message.id, message.ask?.request_hash ?? '')
        deps.onAsked(message)
      },
    },
  ).finally(() => id && pending.remove(id))
  if (reply.status !== 'answered') {
    const why =
      reply.status === 'timeout'
        ? `no answer from the person within ${Math.round(deps.waitMs / 1000)} s`
        : `the person's question was ${reply.status}`
    deps.warn(`${why}: denied`)
    return codexDeny(`Not allowed: ${why}. Ask again later or do something else.`)
  }
  const answer = reply.answer as ApprovalAnswer
  if (answer?.decision === 'allow') {
    const unsigned = await unsignedAllow(deps, reply.message, answer, action, askedAt)
    if (unsigned)
      return codexDeny(`Not allowed: the answer is not signed by the person (${unsigned}).`)
    return {
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    }
  }
  return codexDeny(answer?.message?.trim() || 'The person denied this from Hark.')
}

/** notify after each turn: `last-assistant-message` as one message to the person. */
async function turnComplete(event: HookEvent, deps: HookDeps) {
  const text = str(event, 'last-assistant-message')?.trim() || 'Codex finished its turn.'
  await deps.client().send({ body: { title: 'Codex finished', text } })
}
