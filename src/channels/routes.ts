import { Elysia } from 'elysia'
import { agentAuth } from '../access/guards.ts'
import { doc } from '../core/docs.ts'
import type { Ctx } from '../server/context.ts'
import { AgentResponse, ChannelResponse, RenameRequest } from './schema.ts'
import { channelDetails, renameChannel } from './service.ts'

/** The agent's own channel: its details, and renaming the agent. */
export const channelRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/channel', prefix: '/v1' })
    .use(agentAuth(ctx))
    .get('/channel', ({ agent }) => ({ channel: channelDetails(ctx, agent.channel) }), {
      detail: doc('channel', "The channel's details", ChannelResponse),
    })
    .patch(
      '/agent',
      ({ agent, body }) => {
        const channel = channelDetails(ctx, renameChannel(ctx, agent.channel, body.label))
        return { agent: { label: channel.label }, channel }
      },
      { body: RenameRequest, detail: doc('channel', 'Rename the agent', AgentResponse) },
    )
