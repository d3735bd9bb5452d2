import { Elysia, t } from 'elysia'
import { MessageResponse } from '../messages/schema.ts'
import { messageOf } from '../messages/service.ts'
import { agentAuth } from '../server/auth.ts'
import { type Ctx, holdOpen } from '../server/context.ts'
import { doc } from '../server/docs.ts'
import { parseWait } from '../server/query.ts'
import { AskQuery, AskResponse, AsksResponse } from './schema.ts'
import { cancelAsk, listOpenAsks, readAsk } from './service.ts'

const IdParams = t.Object({ id: t.String() })

/** The agent's questions: list the open ones, long-poll one for its answer, cancel. */
export const askRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/asks', prefix: '/v1' })
    .use(agentAuth(ctx))
    .get('/asks', ({ agent }) => ({ asks: listOpenAsks(ctx, agent.channel) }), {
      detail: doc('asks', 'List open questions', AsksResponse),
    })
    .get(
      '/asks/:id',
      ({ agent, params, query, request }) => {
        const waitMs = parseWait(query.wait)
        holdOpen(ctx, request, waitMs)
        return readAsk(ctx, agent.channel, params.id, waitMs, request.signal)
      },
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
