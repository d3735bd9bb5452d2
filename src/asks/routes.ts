import { Elysia, t } from 'elysia'
import { agentAuth } from '../access/guards.ts'
import { doc } from '../core/docs.ts'
import { jsonResponse } from '../core/errors.ts'
import { holderOf } from '../core/holds.ts'
import { longPoll } from '../core/longpoll.ts'
import { parseWait } from '../core/query.ts'
import { MessageResponse } from '../messages/schema.ts'
import { messageOf } from '../messages/service.ts'
import type { AgentAuth } from '../people/service.ts'
import type { Ctx } from '../server/context.ts'
import { AskQuery, AskResponse, AsksResponse } from './schema.ts'
import { cancelAsk, listOpenAsks, readAsk } from './service.ts'

const IdParams = t.Object({ id: t.String() })

/**
 * `GET /v1/asks/:id`: a question and its answer, held until answered. Served by this route and
 * by the lean path in front of Elysia (`leanRoute` in src/server/app.ts), which both call this.
 */
export async function agentAsk(
  ctx: Ctx,
  agent: AgentAuth,
  id: string,
  query: AskQuery,
  request: Request,
): Promise<Response> {
  const waitMs = parseWait(query.wait)
  const ask = await longPoll(ctx, request, holderOf(agent), waitMs, (signal) =>
    readAsk(ctx, agent.channel, id, waitMs, signal),
  )
  return jsonResponse(JSON.stringify(ask))
}

/** The agent's questions: list the open ones, long-poll one for its answer, cancel. */
export const askRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/asks', prefix: '/v1' })
    .use(agentAuth(ctx))
    .get('/asks', ({ agent }) => ({ asks: listOpenAsks(ctx, agent.channel) }), {
      detail: doc('asks', 'List open questions', AsksResponse),
    })
    .get(
      '/asks/:id',
      ({ agent, params, query, request }) => agentAsk(ctx, agent, params.id, query, request),
      {
        params: IdParams,
        query: AskQuery,
        detail: doc('asks', 'Read a question and its answer (long-poll)', AskResponse),
      },
    )
    .post(
      '/messages/:id/cancel',
      ({ agent, params }) => ({ message: messageOf(cancelAsk(ctx, agent.channel, params.id)) }),
      { params: IdParams, detail: doc('asks', 'Cancel an open question', MessageResponse) },
    )
