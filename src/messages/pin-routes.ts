import { Elysia } from 'elysia'
import { agentAuth } from '../access/guards.ts'
import { doc } from '../core/docs.ts'
import type { Ctx } from '../server/context.ts'
import { PinKeyParams, PinResponse, PinsResponse, PutPinRequest } from './pin-schema.ts'
import { deletePin, listPins, patchPin, putPin } from './pins.ts'
import { EditRequest, Ok } from './schema.ts'

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
