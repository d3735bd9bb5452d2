import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js'
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js'
import type { AgentClient } from '../../agent/client.ts'
import { withdraw } from '../../agent/person.ts'
import type { Env } from '../../agent/profiles.ts'

/**
 * What one tool call can do besides returning: see that the client cancelled it, and tell the
 * client a long wait is still alive. Built from the SDK's `extra` per call.
 */
export interface ToolCall {
  /** Aborted when the client cancels the call (`notifications/cancelled`). */
  signal: AbortSignal
  /**
   * Begins telling the client, when it asked for progress (a `progressToken`), that the call is
   * waiting for the person: now, then every few seconds until the returned stop is called.
   * `totalSeconds` is the wait's bound, so a client can draw it as a bar.
   */
  waiting(what: string, totalSeconds: number): () => void
}

/** Seconds between progress notifications: often enough for a client that resets its timeout
 * on progress, rare enough not to crowd the protocol. */
const DEFAULT_PROGRESS_SECONDS = 5

/** The interval, from `HARK_MCP_PROGRESS_SECONDS` (the tests shorten it), else the default. */
export function progressEveryMs(env: Env): number {
  const n = Number(env.HARK_MCP_PROGRESS_SECONDS)
  return (Number.isFinite(n) && n > 0 ? n : DEFAULT_PROGRESS_SECONDS) * 1000
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>

export function toolCall(extra: Extra, everyMs: number): ToolCall {
  const token = extra._meta?.progressToken
  return {
    signal: extra.signal,
    waiting(what, totalSeconds) {
      if (token === undefined) return () => {}
      const started = Date.now()
      const tell = () => {
        const seconds = (Date.now() - started) / 1000
        // A lost notification is no reason to fail the call: the answer still comes back.
        extra
          .sendNotification({
            method: 'notifications/progress',
            params: {
              progressToken: token,
              // Progress must grow with each notification: the seconds waited do.
              progress: seconds,
              total: totalSeconds,
              message: `${what}, ${Math.round(seconds)} s`,
            },
          })
          .catch(() => {})
      }
      tell()
      const timer = setInterval(tell, everyMs)
      return () => clearInterval(timer)
    },
  }
}

/** The reason the person sees on a question withdrawn because its call was cancelled. */
export const CANCELLED_BY_AGENT = 'cancelled by the agent'

/**
 * Withdraws the question a call asked when the client cancels that call: the model (or the
 * person at the terminal) gave up on it, so it must not stay open on the phone. `asked` is told
 * the question's id once it is on the server; `done` stops watching once the call is over.
 */
export function withdrawOnCancel(call: ToolCall, client: AgentClient) {
  let id: string | undefined
  const onAbort = () => {
    // An answer given at that very moment (409) is dropped with the call, and so is a failure
    // to tell the server: the call is over, so nobody is left to report it to.
    if (id !== undefined) withdraw(client, id, CANCELLED_BY_AGENT).catch(() => {})
  }
  call.signal.addEventListener('abort', onAbort, { once: true })
  return {
    asked(questionId: string) {
      id = questionId
      if (call.signal.aborted) onAbort()
    },
    done: () => call.signal.removeEventListener('abort', onAbort),
  }
}
