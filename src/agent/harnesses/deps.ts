import type { Message } from '../../messages/schema.ts'
import type { AgentClient } from '../client.ts'
import type { PolicyLookup } from '../policy.ts'
import type { ProofCheck } from '../proof.ts'
import type { PendingApprovals } from './pending.ts'

/**
 * What a harness's hook is given and answers: types only, so that the harnesses and the
 * policy and trust code they call can name them without importing one another.
 */
export type HookEvent = Record<string, unknown>
export type HookOutput = Record<string, unknown>

export interface HookDeps {
  /** The connected client; called only when the event needs the server. */
  client: () => AgentClient
  /** The session's open approvals on the phone (see pending.ts). */
  pending: (session: string) => PendingApprovals
  waitMs: number
  /** `--reply`: a Stop waits for the person's text and continues the session with it. */
  reply: boolean
  warn: (line: string) => void
  /** Told before a question is sent, and with it once it is on the server: to withdraw it if
   * the hook is terminated meanwhile. */
  onSending: () => void
  onAsked: (message: Message) => void
  /**
   * Checks the person's signature on an allow before it is reported (src/agent/trust.ts): the
   * answered question, the request hash computed here from the action, and when it was asked.
   * Undefined only with `--allow-unsigned`.
   */
  verifyAllow?: (
    question: Message,
    answer: unknown,
    requestHash: string,
    askedAt: number,
  ) => ProofCheck
  /** The same check on the answer to another question (the Stop reply, AskUserQuestion, an
   * elicitation: answers that steer the agent). Undefined only with `--allow-unsigned`. */
  verifyAnswer?: HookDeps['verifyAllow']
  /** The person's signed rules (src/agent/policy.ts): a covered action is decided here. */
  policy?: PolicyLookup
}
