import type { AnswerProof } from '../../shared/proof.ts'
import type { MessageRow } from '../store.ts'

/** Who answered, as the answer route knows it. */
export interface Answerer {
  via: 'session' | 'person-token' | 'notification'
  device?: string
  proof?: AnswerProof
}

/** What the questions' units tell the house (core/events.ts; reactions: server/reactions.ts). */
export type AskEvent = AskSettled

declare module '../../core/context.ts' {
  interface Events {
    ask: AskEvent
  }
}

/**
 * A question stopped being open: answered, cancelled by its agent or expired by the server
 * (`message.ask_status` says which; `message` as settled), and by whom.
 */
export interface AskSettled {
  type: 'ask.settled'
  message: MessageRow
  by: Answerer | 'agent' | 'server'
}
