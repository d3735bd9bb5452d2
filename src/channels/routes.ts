import { Elysia, t } from 'elysia'
import { agentRoutes, personRoutes } from '../access/guards.ts'
import { retrySafe } from '../access/idempotency/service.ts'
import { approvers } from '../access/passkeys/keys.ts'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { done } from '../core/http/ok.ts'
import { AgentChannelResponse, AgentResponse, ChannelsResponse, RenameRequest } from './schema.ts'
import {
  channelDetails,
  channelSummary,
  deleteChannel,
  listChannels,
  markChannelRead,
  personChannel,
  renameChannel,
} from './service.ts'

const IdParams = t.Object({ id: t.String() })

/** The agent's own channel: its details, and renaming the agent. */
const agentSide = (ctx: Ctx) =>
  agentRoutes(ctx)
    .get(
      '/channel',
      async ({ agent }) => ({
        channel: await channelDetails(ctx, agent.channel),
        approvers: await approvers(ctx, agent.channel.user_id),
      }),
      {
        detail: doc(
          'getChannel',
          'channel',
          "The channel's details and its approvers' keys",
          AgentChannelResponse,
        ),
      },
    )
    .patch(
      '/agent',
      async (c) =>
        await retrySafe(ctx, c, async () => {
          const channel = await channelDetails(
            ctx,
            await renameChannel(ctx, c.agent.channel, c.body.label),
          )
          return { agent: { label: channel.label }, channel }
        }),
      {
        body: RenameRequest,
        detail: doc('renameAgent', 'channel', 'Rename the agent', AgentResponse),
      },
    )

/** The person's channels: the list, one, rename, delete, mark read. Only their own. */
const personSide = (ctx: Ctx) =>
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
        return { channel: await channelSummary(ctx, await renameChannel(ctx, channel, body.label)) }
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
          async () => await deleteChannel(ctx, await personChannel(ctx, person.user.id, params.id)),
        ),
      {
        params: IdParams,
        detail: doc('deleteChannel', 'person', 'Delete a channel with its messages and files'),
      },
    )
    .post(
      '/channels/:id/read',
      async ({ person, params }) => ({
        channel: await markChannelRead(ctx, await personChannel(ctx, person.user.id, params.id)),
      }),
      { params: IdParams, detail: doc('markChannelRead', 'person', 'Mark a channel read') },
    )

/** Channels, both sides: the agent sees its one channel, the person all of theirs. */
export const channelRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/channels' }).use(agentSide(ctx)).use(personSide(ctx))
