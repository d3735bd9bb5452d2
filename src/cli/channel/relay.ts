import { type Action, approvalBlock, titleOf } from '../../agent/actions.ts'
import type { AgentClient } from '../../agent/client.ts'
import { channelKey, DECIDED_IN_TERMINAL } from '../../agent/harnesses/claude.ts'
import type { PendingApprovals } from '../../agent/harnesses/pending.ts'
import { askPerson, withdraw } from '../../agent/person.ts'
import type { ProofCheck } from '../../agent/proof.ts'
import { requestHash, warnUnsigned } from '../../agent/trust.ts'
import type { Message } from '../../messages/schema.ts'
import type { ApprovalAnswer } from '../../shared/blocks.ts'

/**
 * Claude Code's channel permission relay (read from the 2.1.330 binary, docs/decisions.md
 * "Claude Code channels"): while its permission dialog is open it sends
 * `notifications/claude/channel/permission_request` with `{request_id, tool_name, description,
 * input_preview}` (the input as a truncated preview, never the input itself) to every channel
 * that declared `claude/channel/permission`, and takes the first `{request_id, behavior}` that
 * comes back on `notifications/claude/channel/permission`, racing its own terminal dialog and
 * the hooks. The answer has no message: a deny's reason reaches the session as a channel event.
 */
export const PERMISSION_REQUEST = 'notifications/claude/channel/permission_request'
export const PERMISSION = 'notifications/claude/channel/permission'
export const CHANNEL_EVENT = 'notifications/claude/channel'

export interface PermissionRequest {
  request_id: string
  tool_name: string
  description: string
  input_preview: string
}

/** The request's fields, or undefined for one Claude Code would not send (ignored). */
export function parsePermissionRequest(params: unknown): PermissionRequest | undefined {
  if (typeof params !== 'object' || params === null) return undefined
  const p = params as Record<string, unknown>
  if (typeof p.request_id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(p.request_id))
    return undefined
  if (typeof p.tool_name !== 'string' || p.tool_name === '') return undefined
  return {
    request_id: p.request_id,
    tool_name: p.tool_name,
    description: typeof p.description === 'string' ? p.description : '',
    input_preview: typeof p.input_preview === 'string' ? p.input_preview : '',
  }
}

export interface RelayDeps {
  client: AgentClient
  /** The session's open cards (src/agent/harnesses/pending.ts): the hooks withdraw them. */
  pending: PendingApprovals
  waitMs: number
  cwd?: string
  session?: string
  warn: (line: string) => void
  onAsked: (message: Message) => void
  /** The signature check of hark hook (undefined only with --allow-unsigned). */
  verifyAllow?: (q: Message, answer: unknown, hash: string, askedAt: number) => ProofCheck
  /** True when a hook of this session already put this prompt on the phone: one card, not two. */
  hookAsked?: () => Promise<boolean>
  /** Sends one notification to Claude Code. */
  notify: (method: string, params: Record<string, unknown>) => Promise<void>
}

/** What Claude Code showed in its dialog, as the approval's input: the card shows exactly it. */
const inputOf = (r: PermissionRequest) => ({
  description: r.description,
  input_preview: r.input_preview,
})

/**
 * One permission request: an approval card, the person's answer, its signature checked here,
 * and then (only then) the decision relayed. No answer, an unsigned or forged allow: nothing is
 * relayed and the terminal's dialog stands.
 */
export async function relayPermission(r: PermissionRequest, deps: RelayDeps): Promise<void> {
  if (await deps.hookAsked?.()) {
    deps.warn(`${r.request_id}: the PermissionRequest hook asked the person; not asked twice`)
    return
  }
  const input = inputOf(r)
  const action: Action = {
    tool: r.tool_name,
    input,
    cwd: deps.cwd,
    session: deps.session,
    agent: 'Claude Code',
  }
  const block = approvalBlock(action)
  if (r.description) block.summary = r.description
  const askedAt = Date.now()
  let id: string | undefined
  const reply = await askPerson(
    deps.client,
    // Titled as the hook titles it: for a shell tool the description is the command shown.
    { title: titleOf({ ...action, input: { command: r.description } }), blocks: [block] },
    {
      waitMs: deps.waitMs,
      onOutage: deps.warn,
      onAsked: (message) => {
        id = message.id
        deps.pending.add(message.id, channelKey(r.tool_name))
        deps.onAsked(message)
      },
    },
  ).finally(() => {
    if (id) deps.pending.remove(id)
  })
  if (reply.status !== 'answered') return
  const answer = reply.answer as ApprovalAnswer
  const hash = requestHash(r.tool_name, input)
  const check = deps.verifyAllow?.(reply.message, answer, hash, askedAt) ?? { ok: true as const }
  if (answer?.decision === 'allow') {
    if (!check.ok) {
      deps.warn(`the allow is not trusted (${check.reason}): not relayed`)
      await warnUnsigned(deps.client, `"${block.summary}"`, check.reason)
      return
    }
    await deps.notify(PERMISSION, { request_id: r.request_id, behavior: 'allow' })
    return
  }
  if (answer?.decision !== 'deny') return
  // A deny is relayed whoever made it (it can only stop a tool); its message steers the session,
  // so it goes in only when the person's passkey signed it.
  await deps.notify(PERMISSION, { request_id: r.request_id, behavior: 'deny' })
  const message = answer.message?.trim()
  if (message && check.ok) {
    await deps.notify(CHANNEL_EVENT, {
      content: `The person denied "${block.summary}" from Hark: ${message}`,
      meta: { kind: 'permission_denied', request_id: r.request_id, tool: r.tool_name },
    })
  }
}

/** Withdraws the cards still open when the session ends (Claude Code closed the channel). */
export async function withdrawOpen(client: AgentClient, pending: PendingApprovals) {
  for (const id of pending.list()) {
    await withdraw(client, id, DECIDED_IN_TERMINAL)
    pending.remove(id)
  }
}
