import { Elysia, t } from 'elysia'
import { personRoutes } from '../../access/guards.ts'
import { RenameRequest } from '../../channels/schema.ts'
import {
  deleteChannel,
  markChannelRead,
  personChannel,
  renameChannel,
} from '../../channels/service.ts'
import type { Ctx } from '../../core/context.ts'
import { doc } from '../../core/docs.ts'
import { done } from '../../core/http/ok.ts'
import { ChannelsResponse } from './schema.ts'
import { channelSummary, listChannels } from './service.ts'

const IdParams = t.Object({ id: t.String() })

/**
 * The person's channels: the list, one, rename, delete, mark read. Only their own. Each answers
 * a channel as the list shows it (with its last message), so these routes sit with the messages;
 * what they change is the channels' (channels/service.ts).
 */
export const channelListRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/channel-list' }).use(
    personRoutes(ctx)
      .get(
        '/channels',
        async ({ person }) => {
          // Where /v1/app/feed continues from to hear of changes after this list: the person's
          // own change sequence (it never moves with anyone else's activity). Read before the
          // list: a change between the two reads comes again from the feed, never missed.
          const cursor = await ctx.store.messages.currentSeq(person.user.id)
          return { channels: await listChannels(ctx, person.user.id), cursor }
        },
        { detail: doc('listChannels', 'person', 'List my channels', ChannelsResponse) },
      )
      .get(
        '/channels/:id',
        async ({ person, params }) => ({
          channel: await channelSummary(ctx, await personChannel(ctx, person.user.id, params.id)),
        }),
        { params: IdParams, detail: doc('getMyChannel', 'person', 'One of my channels') },
      )
      .patch(
        '/channels/:id',
        async ({ person, params, body }) => {
          const channel = await personChannel(ctx, person.user.id, params.id)
          return {
            channel: await channelSummary(ctx, await renameChannel(ctx, channel, body.label)),
          }
        },
        {
          params: IdParams,
          body: RenameRequest,
          detail: doc('renameChannel', 'person', 'Rename an agent'),
        },
      )
      .delete(
        '/channels/:id',
        ({ person, params }) =>
          done(
            async () =>
              await deleteChannel(ctx, await personChannel(ctx, person.user.id, params.id)),
          ),
        {
          params: IdParams,
          detail: doc('deleteChannel', 'person', 'Delete a channel with its messages and files'),
        },
      )
      .post(
        '/channels/:id/read',
        async ({ person, params }) => {
          const channel = await personChannel(ctx, person.user.id, params.id)
          return { channel: await channelSummary(ctx, await markChannelRead(ctx, channel)) }
        },
        { params: IdParams, detail: doc('markChannelRead', 'person', 'Mark a channel read') },
      ),
  )
