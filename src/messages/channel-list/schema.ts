import { Type as t } from '@sinclair/typebox'
import { Channel } from '../../channels/schema.ts'
import { Message } from '../schema.ts'

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
export type ChannelSummary = Channel & { unread: number; last_message: Message | null }

export const ChannelsResponse = t.Object(
  {
    channels: t.Array(ChannelSummary),
    cursor: t.Integer({ description: 'read /v1/app/feed from here to hear of later changes' }),
  },
  { $id: 'ChannelsResponse' },
)
