import { type Static, Type as t } from '@sinclair/typebox'
import { Approvers } from '../access/passkeys/schema.ts'
import { wrappedResponse } from '../core/docs.ts'
import { LIMITS } from '../messages/limits.ts'
import { Message, type Message as MessageRecord } from '../messages/schema.ts'

export const Channel = t.Object(
  {
    id: t.String(),
    label: t.String({ description: "the agent's name as the person sees it" }),
    created_at: t.Integer(),
    updated_at: t.Integer(),
    open_asks: t.Integer({ description: 'questions waiting for the person' }),
    pins: t.Integer(),
    push_devices: t.Integer({
      description: 'devices of the person a push from this channel reaches',
    }),
  },
  { $id: 'Channel' },
)
export type Channel = Static<typeof Channel>

export const ChannelResponse = wrappedResponse('ChannelResponse', 'channel', Channel)

/** The agent's view of its channel: with the keys that sign its person's answers. */
export const AgentChannelResponse = t.Object(
  { channel: Channel, approvers: Approvers },
  { $id: 'AgentChannelResponse' },
)

/** The person's view of a channel: what the channel list shows. */
export const ChannelSummary = t.Composite(
  [
    Channel,
    t.Object({
      unread: t.Integer({ description: "agent messages since the person's last read (max 1000)" }),
      last_message: t.Union([Message, t.Null()]),
    }),
  ],
  { $id: 'ChannelSummary' },
)
export type ChannelSummary = Channel & { unread: number; last_message: MessageRecord | null }

export const ChannelsResponse = t.Object(
  {
    channels: t.Array(ChannelSummary),
    cursor: t.Integer({ description: 'read /v1/app/feed from here to hear of later changes' }),
  },
  { $id: 'ChannelsResponse' },
)

export const RenameRequest = t.Object(
  {
    label: t.String({ minLength: 1, maxLength: LIMITS.labelChars }),
  },
  { $id: 'RenameRequest' },
)

export const AgentResponse = t.Object(
  {
    agent: t.Object({ label: t.String() }),
    channel: Channel,
  },
  { $id: 'AgentResponse' },
)
