import type { ChannelRow } from '../channels/store.ts'
import type { MessageRow } from './store.ts'

/**
 * What the messages' units tell the house (core/events.ts): pushes and the audit react to
 * them (server/reactions.ts), in the same transaction, without this domain knowing them.
 */
export type MessageEvent = MessageCreated | MessageDeleted

declare module '../core/context.ts' {
  interface Events {
    message: MessageEvent
  }
}

/**
 * A message was written into `channel`: emitted as its insert is sent, not after its answer,
 * so a reaction's reads go down the connection with it (on Postgres, no round trip more while
 * the person's row is locked). The unit fails, and takes the reactions' writes with it, if the
 * insert does.
 */
export interface MessageCreated {
  type: 'message.created'
  channel: ChannelRow
  /** As written: what is known before the insert answers (its change number is not). */
  message: Pick<MessageRow, 'id' | 'sender' | 'body' | 'ask_status' | 'ask_request_hash'> & {
    silent: boolean | number
  }
}

/** A message was deleted at `at`; `message` as it was before (its question's state then). */
export interface MessageDeleted {
  type: 'message.deleted'
  message: MessageRow
  at: number
}
