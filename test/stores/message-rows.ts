import type { messageStore, NewMessage } from '../../src/messages/store.ts'
import { type StoreEngine, T } from './engines.ts'

/** The message store's suites (messages.test.ts, messages-asks.test.ts) share these. */
export type MessageEngine = StoreEngine<ReturnType<typeof messageStore>>

/** An agent's plain message `id` in the channel, at `T`, unless `extra` says otherwise. */
export const msg = (
  id: string,
  channelId: string,
  extra: Partial<NewMessage> = {},
): NewMessage => ({
  id,
  channel_id: channelId,
  sender: 'agent',
  body: `{"text":"${id}"}`,
  pin_key: null,
  ask_status: null,
  ask_expires_at: null,
  ask_request_hash: null,
  silent: false,
  created_at: T,
  ...extra,
})

/** Inserts `m` in a transaction of its own. */
export const send = (e: MessageEngine, m: NewMessage) => e.write((s) => s.insert(m))
