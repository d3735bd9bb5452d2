import { Elysia, t } from 'elysia'
import { personAuth } from '../access/guards.ts'
import { AnswerRequest, AskResponse } from '../asks/schema.ts'
import { answerAsk } from '../asks/service.ts'
import { ChannelsResponse, RenameRequest } from '../channels/schema.ts'
import {
  channelSummary,
  deleteChannel,
  listChannels,
  markChannelRead,
  personChannel,
  renameChannel,
} from '../channels/service.ts'
import type { ChannelRow } from '../channels/store.ts'
import { doc } from '../core/docs.ts'
import { fail, jsonResponse } from '../core/errors.ts'
import { holderOf } from '../core/holds.ts'
import { longPoll, streamOpen } from '../core/longpoll.ts'
import { parseChoice, parseCursor, parseLimit, parseWait } from '../core/query.ts'
import { FileInfo, UploadQuery } from '../files/schema.ts'
import { downloadResponse, findFile, saveUpload } from '../files/service.ts'
import { readPersonFeed, readTail } from '../messages/feed.ts'
import { LIMITS } from '../messages/limits.ts'
import { PinsResponse } from '../messages/pin-schema.ts'
import { listPins } from '../messages/pins.ts'
import { FeedQuery, FeedResponse, MessageResponse, SendRequest } from '../messages/schema.ts'
import { messageOf, readFeed, sendMessage } from '../messages/service.ts'
import type { Ctx } from '../server/context.ts'

/**
 * The person's channel holding message `id`. Another person's question is "question not
 * found", word for word like an unknown id: a 404 must not tell that the id exists elsewhere.
 */
function questionChannel(ctx: Ctx, userId: string, id: string): ChannelRow {
  const row = ctx.store.messages.byId(id)
  const channel = row ? ctx.store.channels.byId(row.channel_id) : undefined
  if (!channel || channel.user_id !== userId) throw fail.notFound('question')
  return channel
}

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
const IdParams = t.Object({ id: t.String() })

/**
 * The person's side, as far as answering needs it: their channels, each channel's change feed,
 * writing to an agent, and answering questions. Each person sees only their own channels.
 */
export const personRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/person', prefix: '/v1/app' })
    .use(personAuth(ctx))
    .get(
      '/channels',
      ({ person }) =>
        ctx.db.transaction(() => ({
          channels: listChannels(ctx, person.user.id),
          // Where /v1/app/feed continues from to hear of changes after this list: the
          // person's own change sequence (it never moves with anyone else's activity).
          cursor: ctx.store.messages.currentSeq(person.user.id),
        }))(),
      { detail: doc('person', 'List my channels', ChannelsResponse) },
    )
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
        detail: doc('person', 'Read the change feed of all my channels (long-poll)', FeedResponse),
      },
    )
    .get(
      '/channels/:id',
      ({ person, params }) => ({
        channel: channelSummary(ctx, personChannel(ctx, person.user.id, params.id)),
      }),
      { params: IdParams, detail: doc('person', 'One of my channels') },
    )
    .patch(
      '/channels/:id',
      ({ person, params, body }) => {
        const channel = personChannel(ctx, person.user.id, params.id)
        return { channel: channelSummary(ctx, renameChannel(ctx, channel, body.label)) }
      },
      { params: IdParams, body: RenameRequest, detail: doc('person', 'Rename an agent') },
    )
    .delete(
      '/channels/:id',
      ({ person, params }) => {
        deleteChannel(ctx, personChannel(ctx, person.user.id, params.id))
        return { ok: true as const }
      },
      { params: IdParams, detail: doc('person', 'Delete a channel with its messages and files') },
    )
    .post(
      '/channels/:id/read',
      ({ person, params }) => ({
        channel: markChannelRead(ctx, personChannel(ctx, person.user.id, params.id)),
      }),
      { params: IdParams, detail: doc('person', 'Mark a channel read') },
    )
    .get(
      '/channels/:id/pins',
      ({ person, params }) => ({
        pins: listPins(ctx, personChannel(ctx, person.user.id, params.id)),
      }),
      { params: IdParams, detail: doc('person', "A channel's pins", PinsResponse) },
    )
    .post(
      '/channels/:id/files',
      ({ person, params, query, request }) => {
        streamOpen(ctx, request)
        return saveUpload(ctx, personChannel(ctx, person.user.id, params.id), {
          name: query.name,
          contentType: request.headers.get('content-type'),
          contentLength: request.headers.get('content-length'),
          body: request.body,
        })
      },
      {
        // Streamed to disk by the handler; the JSON parser leaves upload paths unread.
        params: IdParams,
        query: UploadQuery,
        detail: doc('person', 'Upload a file to a channel (raw body, ?name=)', FileInfo),
      },
    )
    .get(
      '/channels/:id/files/:file',
      ({ person, params }) => {
        const channel = personChannel(ctx, person.user.id, params.id)
        return downloadResponse(ctx, findFile(ctx, channel, params.file))
      },
      {
        params: t.Object({ id: t.String(), file: t.String() }),
        detail: doc('person', 'Download a file of a channel'),
      },
    )
    .get(
      '/channels/:id/messages',
      ({ person, params, query, request }) => {
        const channel = personChannel(ctx, person.user.id, params.id)
        const tail = parseTail(query)
        if (tail !== undefined) return readTail(ctx, channel, tail, query.before)
        const waitMs = parseWait(query.wait)
        const options = {
          since: parseCursor(query.since),
          waitMs,
          sender: parseChoice('sender', query.sender, ['human', 'agent'] as const),
          markSeen: false,
          limit: parseLimit(query.limit, LIMITS.feedPage, LIMITS.feedPage),
        }
        return longPoll(ctx, request, holderOf(person), waitMs, (signal) =>
          readFeed(ctx, channel, { ...options, signal }),
        ).then(jsonResponse)
      },
      {
        params: IdParams,
        query: ChannelFeedQuery,
        detail: doc(
          'person',
          "Read a channel's change feed (long-poll), or with tail=N its newest N messages",
          FeedResponse,
        ),
      },
    )
    .post(
      '/channels/:id/messages',
      ({ person, params, body }) => {
        const channel = personChannel(ctx, person.user.id, params.id)
        return { message: messageOf(sendMessage(ctx, channel, 'human', body)) }
      },
      {
        params: t.Object({ id: t.String() }),
        body: PersonSend,
        detail: doc('person', 'Write to the agent', MessageResponse),
      },
    )
    .post(
      '/messages/:id/answer',
      ({ person, params, body }) => {
        const channel = questionChannel(ctx, person.user.id, params.id)
        return answerAsk(ctx, channel, params.id, body.answer)
      },
      {
        params: t.Object({ id: t.String() }),
        body: AnswerRequest,
        detail: doc('person', 'Answer a question', AskResponse),
      },
    )
