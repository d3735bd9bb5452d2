import { Elysia, t } from 'elysia'
import { agentRoutes, personRoutes } from '../../access/guards.ts'
import { retrySafe } from '../../access/idempotency/service.ts'
import type { AgentAuth } from '../../access/tokens/service.ts'
import { personChannel } from '../../channels/service.ts'
import type { ChannelRow } from '../../channels/store.ts'
import type { Ctx } from '../../core/context.ts'
import { doc } from '../../core/docs.ts'
import { fail, jsonResponse } from '../../core/errors.ts'
import { holderOf } from '../../core/holds.ts'
import { longPoll } from '../../core/longpoll.ts'
import { parseWait } from '../../core/query.ts'
import { messageOf } from '../records.ts'
import { MessageResponse } from '../schema.ts'
import { channelHistory } from './audit/service.ts'
import { answerBatch } from './batch.ts'
import {
  AnswerRequest,
  AskQuery,
  AskResponse,
  AsksResponse,
  BatchAnswerRequest,
  BatchAnswerResponse,
  CancelRequest,
  HistoryQuery,
  PersonAsksQuery,
} from './schema.ts'
import { answerAsk, cancelAsk, listOpenAsks, listPersonAsks, readAsk } from './service.ts'

const IdParams = t.Object({ id: t.String() })

/**
 * `GET /v1/asks/:id`: a question and its answer, held until answered. Served by this route and
 * by the lean path in front of Elysia (`leanRoute` in src/server/lean.ts), which both call this.
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
const agentSide = (ctx: Ctx) =>
  agentRoutes(ctx)
    .get('/asks', async ({ agent }) => ({ asks: await listOpenAsks(ctx, agent.channel) }), {
      detail: doc('listAsks', 'asks', 'List open questions', AsksResponse),
    })
    .get(
      '/asks/:id',
      ({ agent, params, query, request }) => agentAsk(ctx, agent, params.id, query, request),
      {
        params: IdParams,
        query: AskQuery,
        detail: doc('getAsk', 'asks', 'Read a question and its answer (long-poll)', AskResponse),
      },
    )
    .post(
      '/messages/:id/cancel',
      async ({ agent, request, body, params }) =>
        await retrySafe(ctx, { agent, request, body }, async () => ({
          message: messageOf(await cancelAsk(ctx, agent.channel, params.id, body.reason)),
        })),
      {
        params: IdParams,
        body: CancelRequest,
        detail: doc('cancelAsk', 'asks', 'Cancel an open question', MessageResponse),
      },
    )

/**
 * The person's channel holding message `id`. Another person's question is "question not
 * found", word for word like an unknown id: a 404 must not tell that the id exists elsewhere.
 */
async function questionChannel(ctx: Ctx, userId: string, id: string): Promise<ChannelRow> {
  const row = await ctx.store.messages.byId(id)
  const channel = row ? await ctx.store.channels.byId(row.channel_id) : undefined
  if (!channel || channel.user_id !== userId) throw fail.notFound('question')
  return channel
}

const HISTORY_PAGE = 100

/** The person's side: what waits on them across their agents, answering it, and its history. */
const personSide = (ctx: Ctx) =>
  personRoutes(ctx)
    .get(
      '/asks',
      async ({ person, query }) => ({
        asks: await listPersonAsks(ctx, person.user.id, query.type),
      }),
      {
        query: PersonAsksQuery,
        detail: doc(
          'listMyAsks',
          'person',
          'List open questions of every channel, oldest first',
          AsksResponse,
        ),
      },
    )
    .get(
      '/channels/:id/approvals',
      async ({ person, params, query }) => {
        const channel = await personChannel(ctx, person.user.id, params.id)
        const before = query.before === undefined ? Number.MAX_SAFE_INTEGER : Number(query.before)
        const limit = query.limit === undefined ? HISTORY_PAGE : Number(query.limit)
        if (!Number.isSafeInteger(before) || before < 1) {
          throw fail.invalid('before', 'must be a positive integer (a seq from the last page)')
        }
        if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_PAGE) {
          throw fail.invalid('limit', `must be an integer from 1 to ${HISTORY_PAGE}`)
        }
        return { approvals: await channelHistory(ctx, channel.id, before, limit) }
      },
      {
        params: IdParams,
        query: HistoryQuery,
        detail: doc(
          'listApprovals',
          'person',
          "A channel's approval decisions, newest first (the audit log)",
        ),
      },
    )
    .post(
      '/messages/:id/answer',
      async ({ person, params, body }) => {
        const channel = await questionChannel(ctx, person.user.id, params.id)
        // A passkey signs in the app; a script's person token answers, but never with a proof.
        if (body.proof && !person.session) {
          throw fail.forbidden('proof: signed answers come from the app (a browser session)')
        }
        return answerAsk(ctx, channel, params.id, body.answer, {
          via: person.session ? 'session' : 'person-token',
          device: (person.session?.user_agent ?? person.token?.label ?? undefined)?.slice(0, 200),
          proof: body.proof,
        })
      },
      {
        params: IdParams,
        body: AnswerRequest,
        detail: doc('answerAsk', 'person', 'Answer a question', AskResponse, { errors: [409] }),
      },
    )
    .post(
      '/answers',
      async ({ person, body }) => {
        // One passkey gesture over several claims: only the app (a browser session) signs.
        if (!person.session) {
          throw fail.forbidden('proof: signed answers come from the app (a browser session)')
        }
        const answers = await answerBatch(ctx, person.user.id, body.items, {
          via: 'session',
          device: person.session.user_agent?.slice(0, 200),
          proof: body.proof,
        })
        return { answers }
      },
      {
        body: BatchAnswerRequest,
        detail: doc(
          'answerBatch',
          'person',
          'Answer several questions with one signature (all or nothing)',
          BatchAnswerResponse,
          { session: true, errors: [409] },
        ),
      },
    )

/** Questions, both sides: the agent asks, waits and cancels; the person answers. */
export const askRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/asks' }).use(agentSide(ctx)).use(personSide(ctx))
