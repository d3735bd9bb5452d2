import { type Static, Type as t } from '@sinclair/typebox'
import { Approvers } from '../access/passkeys/schema.ts'
import { wrappedResponse } from '../core/docs.ts'
import { LABEL_MAX_CHARS } from '../core/labels.ts'

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

export const RenameRequest = t.Object(
  {
    label: t.String({ minLength: 1, maxLength: LABEL_MAX_CHARS }),
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
