import type { Message, SendRequest } from '../messages/schema.ts'
import { type AgentClient, HarkError } from './client.ts'
import { deadlineAfter, pollUntil } from './waiting.ts'

/**
 * Asking the person on behalf of a coding agent's harness, bounded by the harness's own time
 * limit: the question is sent, waited for, and withdrawn when no answer came in time, so nothing
 * stays open on the phone for a moment that has passed. Silence is never an answer.
 */
export type Reply =
  | { status: 'answered'; answer: unknown; message: Message }
  | { status: 'cancelled' | 'timeout'; message: Message }

export interface AskPersonOptions {
  /** How long to wait for the answer. */
  waitMs: number
  /** Told the question's id as soon as it is on the server (to withdraw it later if need be). */
  onAsked?: (message: Message) => void
  onOutage?: (line: string) => void
  /** The person signs the answer with a passkey (a question that is not an approval). */
  proof?: boolean
  /** No answer in time leaves the question open (a deferred action, answered later). */
  leaveOpen?: boolean
}

/**
 * How long past the question's expiry the wait goes on, to hear of it from the server (slow, or
 * lost for a while), before the question is withdrawn from here. Small: Claude Code ends a hook
 * at 600 s, and the default wait is 540.
 */
const EXPIRY_GRACE_MS = 10_000
/** A deferred action's card stays answerable for a day (the run resumes when it is answered). */
const DEFERRED_EXPIRY_S = 24 * 3600

/**
 * The question expires on the server when the wait ends: one moment, measured by one clock,
 * that the card shows ("Expires in 9 minutes; no answer means not allowed") and the harness acts
 * on. Its expiry is reported as `timeout`, as a wait that ran out here is.
 */
export async function askPerson(
  client: AgentClient,
  body: SendRequest['body'],
  options: AskPersonOptions,
): Promise<Reply> {
  const { message } = await client.send({
    body,
    expires_in: options.leaveOpen ? DEFERRED_EXPIRY_S : Math.ceil(options.waitMs / 1000),
    ...(options.proof ? { proof: true } : {}),
  })
  options.onAsked?.(message)
  // The settled record, not the one sent: it carries the answer's proof.
  const settled = await pollUntil(
    async (wait, signal) => {
      const read = await client.ask(message.id, wait, signal)
      const status = read.message.ask?.status
      if (status === 'answered') return { status, answer: read.answer, message: read.message }
      if (status === 'expired') return { status: 'timeout', message: read.message }
      if (status === 'cancelled') return { status, message: read.message }
      return undefined
    },
    { deadline: deadlineAfter(options.waitMs + EXPIRY_GRACE_MS), onOutage: options.onOutage },
  )
  if (settled) return settled as Reply
  if (options.leaveOpen) return { status: 'timeout', message }
  // No answer in time: withdraw it. An answer that arrived meanwhile still counts (409).
  const late = await withdraw(client, message.id, 'no answer in time')
  return late ?? { status: 'timeout', message }
}

/**
 * Cancels an open question with a reason the person sees. When it was answered at the last
 * moment (409), that answer is returned: it is the person's decision, and it is not lost.
 * Undefined when it was withdrawn (or the server could not be told).
 */
export async function withdraw(
  client: AgentClient,
  id: string,
  reason: string,
): Promise<Reply | undefined> {
  try {
    await client.cancel(id, reason)
    return undefined
  } catch (error) {
    if (!(error instanceof HarkError) || error.status !== 409) return undefined
    const { message, answer } = await client.ask(id)
    if (message.ask?.status === 'answered') return { status: 'answered', answer, message }
    return undefined
  }
}
