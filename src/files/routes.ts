import { Elysia, t } from 'elysia'
import { agentRoutes, personRoutes } from '../access/guards.ts'
import { retrySafeUpload } from '../access/idempotency/service.ts'
import { personChannel } from '../channels/service.ts'
import type { Ctx } from '../core/context.ts'
import { doc } from '../core/docs.ts'
import { streamOpen } from '../core/longpoll.ts'
import { FileInfo, UploadQuery } from './schema.ts'
import { downloadResponse, findFile, saveUpload } from './service.ts'

/** Files of the agent's channel: upload raw bytes, download by id. */
const agentSide = (ctx: Ctx) =>
  agentRoutes(ctx)
    .post(
      '/files',
      (c) => {
        streamOpen(ctx, c.request)
        // The JSON parser left the body unread: the bytes are the request (hashed when keyed).
        return retrySafeUpload(ctx, { agent: c.agent, request: c.request }, (onRecord) =>
          saveUpload(
            ctx,
            c.agent.channel,
            {
              name: c.query.name,
              contentType: c.request.headers.get('content-type'),
              contentLength: c.request.headers.get('content-length'),
              body: c.request.body,
            },
            onRecord,
          ),
        )
      },
      {
        // The bytes are streamed to the blob store by the handler: the JSON parser leaves upload paths
        // unread (json-body.ts `isUploadPath`).
        query: UploadQuery,
        detail: {
          ...doc('uploadFile', 'files', 'Upload a file (raw body, ?name=)', FileInfo),
          // Not derived from a body schema (there is none to validate): say what is sent.
          requestBody: {
            required: true,
            description: "the file's bytes; Content-Type is the file's media type",
            content: { '*/*': { schema: { type: 'string', format: 'binary' } } },
          },
        },
      },
    )
    .get(
      '/files/:id',
      async ({ agent, params, request }) =>
        downloadResponse(ctx, await findFile(ctx, agent.channel, params.id), request.headers),
      {
        params: t.Object({ id: t.String() }),
        detail: doc('downloadFile', 'files', 'Download a file'),
      },
    )

/** The files of the person's channels: upload to one, download from one. */
const personSide = (ctx: Ctx) =>
  personRoutes(ctx)
    .post(
      '/channels/:id/files',
      async ({ person, params, query, request }) => {
        streamOpen(ctx, request)
        const channel = await personChannel(ctx, person.user.id, params.id)
        // The app's queued sends key each of their files, so an upload retried after a lost
        // answer is stored once; the person's keys are kept apart from the agent's.
        const call = { agent: { channel }, request, writer: person.user.id }
        return retrySafeUpload(ctx, call, (onRecord) =>
          saveUpload(
            ctx,
            channel,
            {
              name: query.name,
              contentType: request.headers.get('content-type'),
              contentLength: request.headers.get('content-length'),
              body: request.body,
            },
            onRecord,
          ),
        )
      },
      {
        // Streamed to the blob store by the handler; the JSON parser leaves upload paths unread.
        params: t.Object({ id: t.String() }),
        query: UploadQuery,
        detail: doc(
          'uploadChannelFile',
          'person',
          'Upload a file to a channel (raw body, ?name=)',
          FileInfo,
          { errors: [409] },
        ),
      },
    )
    .get(
      '/channels/:id/files/:file',
      async ({ person, params, request }) => {
        const channel = await personChannel(ctx, person.user.id, params.id)
        return downloadResponse(ctx, await findFile(ctx, channel, params.file), request.headers)
      },
      {
        params: t.Object({ id: t.String(), file: t.String() }),
        detail: doc('downloadChannelFile', 'person', 'Download a file of a channel'),
      },
    )

/** Files, both sides: a channel's files as its agent and as its person reach them. */
export const fileRoutes = (ctx: Ctx) =>
  new Elysia({ name: 'hark/files' }).use(agentSide(ctx)).use(personSide(ctx))
