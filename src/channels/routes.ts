import { Elysia } from 'elysia'
import { agentRoutes } from '../access/guards.ts'
import { retrySafe } from '../access/idempotency/service.ts'
import { approvers } from '../access/passkeys/keys.ts'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { AgentChannelResponse, AgentResponse, RenameRequest } from './schema.ts'
import { channelDetails, renameChannel } from './service.ts'

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

/**
 * The agent's side of channels. The person's side answers channels as their list shows them,
 * with the last message, so it is the messages' (messages/channel-list/routes.ts).
 */
export const channelRoutes = (ctx: Ctx) => new Elysia({ name: 'hark/channels' }).use(agentSide(ctx))
