import { Elysia, t } from 'elysia'
import { agentRoutes, personRoutes } from '../access/guards.ts'
import { type KeyedCall, retrySafe } from '../access/idempotency/service.ts'
import type { AgentAuth } from '../access/tokens/service.ts'
import { personChannel } from '../channels/service.ts'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { fail, jsonResponse } from '../core/errors.ts'
import { holderOf } from '../core/holds.ts'
import { done } from '../core/http/ok.ts'
import { holdPoll, longPoll } from '../core/longpoll.ts'
import { parseChoice, parseCursor, parseFlag, parseLimit, parseWait } from '../core/query.ts'
import { readFeed, readPersonFeed, readTail } from './feed.ts'
import { LIMITS } from './limits.ts'
import { type Pin, PinKeyParams, PinResponse, PinsResponse, PutPinRequest } from './pin-schema.ts'
import { deletePin, listPins, patchPin, putPin } from './pins.ts'
import { messageOf } from './records.ts'
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
  replaceMessage,
  sendMessage,
  setMessageState,
} from './service.ts'
import type { MessageRow } from './store.ts'

const IdParams = t.Object({ id: t.String() })

/** `{ message }`: how a write to a message answers. */
const answer = (row: MessageRow) => ({ message: messageOf(row) })

/** An agent's write to a message, safe to retry with its key, answered with the message. */
const messageWrite = async (ctx: Ctx, call: KeyedCall, write: () => Promise<MessageRow>) =>
  await retrySafe(ctx, call, async () => answer(await write()))

/** An agent's write to a pin, safe to retry with its key, answered with the pin. */
const pinWrite = async (ctx: Ctx, call: KeyedCall, write: () => Promise<Pin>) =>
  await retrySafe(ctx, call, async () => ({ pin: await write() }))

/**
 * `GET /v1/messages`: the agent's change feed. Served by this route and by the lean path in
 * front of Elysia (`leanRoute` in src/server/lean.ts), which both call this.
 */
export function agentFeed(
  ctx: Ctx,
  agent: AgentAuth,
  query: FeedQuery,
  request: Request,
): Promise<Response> {
  const waitMs = parseWait(query.wait)
  const since = parseCursor(query.since)
  const sender = parseChoice('sender', query.sender, ['human', 'agent'] as const)
  const markSeen = !parseFlag('peek', query.peek)
  const limit = parseLimit(query.limit, LIMITS.feedPage, LIMITS.feedPage)
  // `holdPoll`, not `longPoll`, and no async function: no callback or extra async frame for
  // what is held by the thousand (bench/longpolls.ts counts the bytes of each).
  const held = holdPoll(ctx, request, holderOf(agent), waitMs)
  const signal = held ?? request.signal
  const answered = readFeed(ctx, agent.channel, { since, waitMs, sender, markSeen, limit, signal })
  const response = answered.then(jsonResponse)
  return held ? response.finally(() => held.release()) : response
}

/**
 * The agent's messages: send, read the change feed, edit, replace, delete, acknowledge; and its
 * pins, status messages kept by a key the agent chooses.
 */
const agentSide = (ctx: Ctx) =>
  agentRoutes(ctx)
    .post(
      '/messages',
      async ({ agent, request, body }) =>
        await messageWrite(
          ctx,
          { agent, request, body },
          async () => await sendMessage(ctx, agent.channel, 'agent', body),
        ),
      {
        body: SendRequest,
        detail: doc('sendMessage', 'messages', 'Send a message or a question', MessageResponse),
      },
    )
    .get('/messages', ({ agent, query, request }) => agentFeed(ctx, agent, query, request), {
      query: FeedQuery,
      detail: doc('readFeed', 'messages', 'Read the change feed (long-poll)', FeedResponse),
    })
    .patch(
      '/messages/:id',
      async ({ agent, request, body, params }) =>
        await messageWrite(
          ctx,
          { agent, request, body },
          async () => await editMessage(ctx, agent.channel, params.id, body),
        ),
      {
        params: IdParams,
        body: EditRequest,
        detail: doc('editMessage', 'messages', 'Edit a message', MessageResponse),
      },
    )
    .put(
      '/messages/:id',
      async ({ agent, request, body, params }) =>
        await messageWrite(
          ctx,
          { agent, request, body },
          async () => await replaceMessage(ctx, agent.channel, params.id, body.body),
        ),
      {
        params: IdParams,
        body: ReplaceRequest,
        detail: doc('replaceMessage', 'messages', "Replace a message's body", MessageResponse),
      },
    )
    .delete(
      '/messages/:id',
      ({ agent, params }) => done(async () => await deleteMessage(ctx, agent.channel, params.id)),
      { params: IdParams, detail: doc('deleteMessage', 'messages', 'Delete a message', Ok) },
    )
    .post(
      '/messages/:id/state',
      async ({ agent, request, body, params }) =>
        await messageWrite(
          ctx,
          { agent, request, body },
          async () => await setMessageState(ctx, agent.channel, params.id, body.state),
        ),
      {
        params: IdParams,
        body: StateRequest,
        detail: doc(
          'setMessageState',
          'messages',
          "Acknowledge the person's message",
          MessageResponse,
        ),
      },
    )
    .get('/pins', async ({ agent }) => ({ pins: await listPins(ctx, agent.channel) }), {
      detail: doc('listPins', 'pins', 'List pins', PinsResponse),
    })
    .put(
      '/pins/:key',
      async ({ agent, request, body, params }) =>
        await pinWrite(
          ctx,
          { agent, request, body },
          async () => await putPin(ctx, agent.channel, params.key, body),
        ),
      {
        params: PinKeyParams,
        body: PutPinRequest,
        detail: doc('putPin', 'pins', 'Create or replace a pin', PinResponse),
      },
    )
    .patch(
      '/pins/:key',
      async ({ agent, request, body, params }) =>
        await pinWrite(
          ctx,
          { agent, request, body },
          async () => await patchPin(ctx, agent.channel, params.key, body),
        ),
      {
        params: PinKeyParams,
        body: EditRequest,
        detail: doc('editPin', 'pins', 'Edit a pin', PinResponse),
      },
    )
    .delete(
      '/pins/:key',
      ({ agent, params }) => done(async () => await deletePin(ctx, agent.channel, params.key)),
      { params: PinKeyParams, detail: doc('deletePin', 'pins', 'Remove a pin', Ok) },
    )

const PersonSend = t.Object({ body: SendRequest.properties.body })
const PersonFeedQuery = t.Object({
  since: FeedQuery.properties.since,
  wait: FeedQuery.properties.wait,
  limit: FeedQuery.properties.limit,
})
const ChannelFeedQuery = t.Object({
  ...FeedQuery.properties,
  tail: t.Optional(t.String({ description: 'the newest N messages instead of changes' })),
  before: t.Optional(t.String({ description: 'with tail: the N messages before this id' })),
})

/** A thread's first screen and each page back: enough to fill a phone twice. */
const TAIL_DEFAULT = 50

/** `tail` → how many messages; it reads a window, so the change feed's parameters are 400. */
function parseTail(query: typeof ChannelFeedQuery.static): number | undefined {
  if (query.tail === undefined && query.before === undefined) return undefined
  for (const name of ['since', 'wait', 'sender'] as const) {
    if (query[name] !== undefined) {
      throw fail.invalid('tail', `reads the newest messages and cannot be combined with ${name}`)
    }
  }
  if (query.tail === undefined || query.tail === '') return TAIL_DEFAULT
  if (!/^\d{1,6}$/.test(query.tail) || Number(query.tail) < 1) {
    throw fail.invalid('tail', `must be an integer from 1 to ${LIMITS.feedPage}`)
  }
  return Math.min(Number(query.tail), LIMITS.feedPage)
}

/**
 * The person's messages: the change feed of all their channels (what keeps the app's list live),
 * each channel's feed or tail, its pins, and writing to its agent.
 */
const personSide = (ctx: Ctx) =>
  personRoutes(ctx)
    .get(
      '/feed',
      ({ person, query, request }) => {
        const waitMs = parseWait(query.wait)
        const options = {
          since: parseCursor(query.since),
          waitMs,
          limit: parseLimit(query.limit, LIMITS.feedPage, LIMITS.feedPage),
        }
        return longPoll(ctx, request, holderOf(person), waitMs, (signal) =>
          readPersonFeed(ctx, person.user.id, { ...options, signal }),
        )
      },
      {
        query: PersonFeedQuery,
        detail: doc(
          'readMyFeed',
          'person',
          'Read the change feed of all my channels (long-poll)',
          FeedResponse,
        ),
      },
    )
    .get(
      '/channels/:id/messages',
      async ({ person, params, query, request }) => {
        const channel = await personChannel(ctx, person.user.id, params.id)
        const tail = parseTail(query)
        if (tail !== undefined) return await readTail(ctx, channel, tail, query.before)
        const waitMs = parseWait(query.wait)
        const options = {
          since: parseCursor(query.since),
          waitMs,
          sender: parseChoice('sender', query.sender, ['human', 'agent'] as const),
          markSeen: false,
          limit: parseLimit(query.limit, LIMITS.feedPage, LIMITS.feedPage),
        }
        return longPoll(
          ctx,
          request,
          holderOf(person),
          waitMs,
          async (signal) => await readFeed(ctx, channel, { ...options, signal }),
        ).then(jsonResponse)
      },
      {
        params: IdParams,
        query: ChannelFeedQuery,
        detail: doc(
          'readChannel',
          'person',
          "Read a channel's change feed (long-poll), or with tail=N its newest N messages",
          FeedResponse,
        ),
      },
    )
    .post(
      '/channels/:id/messages',
      async ({ person, params, body, request }) => {
        const channel = await personChannel(ctx, person.user.id, params.id)
        // The app's queued sends (written offline) carry a key made once per message, so a
        // retry after a lost answer never posts twice: the agent routes' semantics.
        const call = { agent: { channel }, request, body, writer: person.user.id }
        return await messageWrite(
          ctx,
          call,
          async () => await sendMessage(ctx, channel, 'human', body),
        )
      },
      {
        params: IdParams,
        body: PersonSend,
        detail: doc('writeToAgent', 'person', 'Write to the agent', MessageResponse),
      },
    )
    .get(
      '/channels/:id/pins',
      async ({ person, params }) => ({
        pins: await listPins(ctx, await personChannel(ctx, person.user.id, params.id)),
      }),
      {
        params: IdParams,
        detail: doc('listChannelPins', 'person', "A channel's pins", PinsResponse),
      },
    )

/** Messages and pins, both sides: the agent's channel and the person's channels. */
export const messageRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/messages' }).use(agentSide(ctx)).use(personSide(ctx))
