import { Elysia, t } from 'elysia'
import { agentAuth } from '../access/guards.ts'
import { doc } from '../core/docs.ts'
import { jsonResponse } from '../core/errors.ts'
import { holderOf } from '../core/holds.ts'
import { longPoll } from '../core/longpoll.ts'
import { parseChoice, parseCursor, parseFlag, parseLimit, parseWait } from '../core/query.ts'
import type { AgentAuth } from '../people/service.ts'
import type { Ctx } from '../server/context.ts'
import { LIMITS } from './limits.ts'
import {
  EditRequest,
  FeedQuery,
  FeedResponse,
  MessageResponse,
  Ok,
  ReplaceRequest,
  SendRequest,
  StateRequest,
} from './schema.ts'
import {
  deleteMessage,
  editMessage,
  messageOf,
  readFeed,
  replaceMessage,
  sendMessage,
  setMessageState,
} from './service.ts'

const IdParams = t.Object({ id: t.String() })

/**
 * `GET /v1/messages`: the agent's change feed. Served by this route and by the lean path in
 * front of Elysia (`leanRoute` in src/server/app.ts), which both call this.
 */
export async function agentFeed(
  ctx: Ctx,
  agent: AgentAuth,
  query: FeedQuery,
  request: Request,
): Promise<Response> {
  const waitMs = parseWait(query.wait)
  const options = {
    since: parseCursor(query.since),
    waitMs,
    sender: parseChoice('sender', query.sender, ['human', 'agent'] as const),
    markSeen: !parseFlag('peek', query.peek),
    limit: parseLimit(query.limit, LIMITS.feedPage, LIMITS.feedPage),
  }
  const json = await longPoll(ctx, request, holderOf(agent), waitMs, (signal) =>
    readFeed(ctx, agent.channel, { ...options, signal }),
  )
  return jsonResponse(json)
}

/** The agent's messages: send, read the change feed, edit, replace, delete, acknowledge. */
export const messageRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/messages', prefix: '/v1' })
    .use(agentAuth(ctx))
    .post(
      '/messages',
      ({ agent, body }) => ({ message: messageOf(sendMessage(ctx, agent.channel, 'agent', body)) }),
      {
        body: SendRequest,
        detail: doc('messages', 'Send a message or a question', MessageResponse),
      },
    )
    .get('/messages', ({ agent, query, request }) => agentFeed(ctx, agent, query, request), {
      query: FeedQuery,
      detail: doc('messages', 'Read the change feed (long-poll)', FeedResponse),
    })
    .patch(
      '/messages/:id',
      ({ agent, params, body }) => ({
        message: messageOf(editMessage(ctx, agent.channel, params.id, body)),
      }),
      {
        params: IdParams,
        body: EditRequest,
        detail: doc('messages', 'Edit a message', MessageResponse),
      },
    )
    .put(
      '/messages/:id',
      ({ agent, params, body }) => ({
        message: messageOf(replaceMessage(ctx, agent.channel, params.id, body.body)),
      }),
      {
        params: IdParams,
        body: ReplaceRequest,
        detail: doc('messages', "Replace a message's body", MessageResponse),
      },
    )
    .delete(
      '/messages/:id',
      ({ agent, params }) => {
        deleteMessage(ctx, agent.channel, params.id)
        return { ok: true as const }
      },
      { params: IdParams, detail: doc('messages', 'Delete a message', Ok) },
    )
    .post(
      '/messages/:id/state',
      ({ agent, params, body }) => ({
        message: messageOf(setMessageState(ctx, agent.channel, params.id, body.state)),
      }),
      {
        params: IdParams,
        body: StateRequest,
        detail: doc('messages', "Acknowledge the person's message", MessageResponse),
      },
    )
