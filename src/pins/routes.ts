import { Elysia } from 'elysia'
import { EditRequest, Ok } from '../messages/schema.ts'
import { agentAuth } from '../server/auth.ts'
import type { Ctx } from '../server/context.ts'
import { doc } from '../server/docs.ts'
import { PinKeyParams, PinResponse, PinsResponse, PutPinRequest } from './schema.ts'
import { deletePin, listPins, patchPin, putPin } from './service.ts'

/** Pinned status messages, keyed by a string the agent chooses. */
export const pinRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/pins', prefix: '/v1' })
    .use(agentAuth(ctx))
    .get('/pins', ({ agent }) => ({ pins: listPins(ctx, agent.channel) }), {
      detail: doc('pins', 'List pins', PinsResponse),
    })
    .put(
      '/pins/:key',
      ({ agent, params, body }) => ({ pin: putPin(ctx, agent.channel, params.key, body) }),
      {
        params: PinKeyParams,
        body: PutPinRequest,
        detail: doc('pins', 'Create or replace a pin', PinResponse),
      },
    )
    .patch(
      '/pins/:key',
      ({ agent, params, body }) => ({ pin: patchPin(ctx, agent.channel, params.key, body) }),
      { params: PinKeyParams, body: EditRequest, detail: doc('pins', 'Edit a pin', PinResponse) },
    )
    .delete(
      '/pins/:key',
      ({ agent, params }) => {
        deletePin(ctx, agent.channel, params.key)
        return { ok: true as const }
      },
      { params: PinKeyParams, detail: doc('pins', 'Remove a pin', Ok) },
    )
