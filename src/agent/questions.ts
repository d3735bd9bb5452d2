import type { Message, MessageBody } from '../messages/schema.ts'
import { composeQuestion, type QuestionSpec } from './bodies.ts'
import type { AgentClient } from './client.ts'
import { deadlineAfter, pollUntil, type WaitOptions } from './waiting.ts'

/**
 * Questions: asking and waiting for the answer, the same from `hark ask` and from the MCP tool
 * `ask`; they differ only in how long they wait and what they show meanwhile.
 */
export type AskOutcome =
  | { id: string; status: 'answered' | 'expired' | 'cancelled'; answer: unknown }
  | { id: string; status: 'timeout' }

export interface AskOptions extends WaitOptions {
  silent?: boolean
  /** Seconds until the question expires and its inputs' defaults become the answer. */
  expiresIn?: number
  /** The person signs the answer with a passkey (`hark ask --verify` checks it). */
  proof?: boolean
  /** Told once the question is sent, before the wait begins, with the body as this side sent it. */
  onAsked?: (message: Message, sent: MessageBody) => void
}

/**
 * Sends the question, then waits for its answer as `waitForAnswer` does. The timeout counts
 * from the call: uploads and the send are inside it, so a caller's bound holds.
 */
export async function askQuestion(
  client: AgentClient,
  spec: QuestionSpec,
  options: AskOptions = {},
): Promise<AskOutcome> {
  const deadline = deadlineAfter(options.timeoutMs)
  const body = await composeQuestion(client, spec)
  const { message } = await client.send({
    body,
    silent: options.silent,
    expires_in: options.expiresIn,
    ...(options.proof ? { proof: true } : {}),
  })
  options.onAsked?.(message, body)
  const left = options.timeoutMs === undefined ? undefined : Math.max(0, deadline - Date.now())
  return waitForAnswer(client, message.id, left, options.onOutage, options.signal)
}

/** Waits until the question is no longer open, or the timeout passes (`status: 'timeout'`). */
export async function waitForAnswer(
  client: AgentClient,
  id: string,
  timeoutMs: number | undefined,
  onOutage?: (line: string) => void,
  signal?: AbortSignal,
): Promise<AskOutcome> {
  const settled = await pollUntil(
    async (wait, signal) => {
      const { message, answer } = await client.ask(id, wait, signal)
      const status = message.ask?.status
      return status === undefined || status === 'open' ? undefined : { id, status, answer }
    },
    { deadline: deadlineAfter(timeoutMs), onOutage, signal },
  )
  return settled ?? { id, status: 'timeout' }
}
