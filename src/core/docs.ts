import { type TSchema, Type as t } from '@sinclair/typebox'

/**
 * OpenAPI details of the routes. Every route's `detail` is `doc(...)`: its operationId (named
 * here, stable, camelCase: what a generated client calls the method), tag, summary and the
 * schema of its 200 answer. Answers are documented, not validated at run time: the services
 * build them from typed records. The error responses each route can give, its security and the
 * named component schemas are added when the document is assembled (`openapi-document.ts`).
 */

/** `{ error, field? }`: every refusal of the API (docs/decisions.md "Records"). */
export const ErrorBody = t.Object(
  {
    error: t.String({ description: 'what is wrong, for a person to read' }),
    field: t.Optional(
      t.String({ description: 'the request field at fault, e.g. `body.blocks[2].options`' }),
    ),
  },
  { $id: 'Error' },
)

/**
 * `{ [key]: item }`: an answer that wraps one record under its name, itself a named component
 * schema (`$id`, see `openapi-document.ts`), e.g. `PinResponse` is `{ pin: Pin }`.
 */
export const wrappedResponse = <K extends string, T extends TSchema>(id: string, key: K, item: T) =>
  t.Object({ [key]: item } as Record<K, T>, { $id: id })

/** `{ [key]: item[] }`: an answer that lists records, named like `wrappedResponse`. */
export const listResponse = <K extends string, T extends TSchema>(id: string, key: K, item: T) =>
  wrappedResponse(id, key, t.Array(item))

/** The statuses documented as named responses (`components.responses`). */
export const ERROR_RESPONSES = {
  400: { name: 'BadRequest', description: 'The request is invalid (`field` names what)' },
  401: {
    name: 'Unauthorized',
    description: 'No token, an unknown one or a revoked one (`WWW-Authenticate: Bearer`)',
  },
  403: { name: 'Forbidden', description: 'A valid credential of the wrong kind, or not allowed' },
  404: { name: 'NotFound', description: 'Not found (or not yours: answered the same)' },
  409: {
    name: 'Conflict',
    description: 'Conflicts with the current state, a limit, or an Idempotency-Key used before',
  },
  413: { name: 'PayloadTooLarge', description: 'The body or a quota is over its limit' },
  429: { name: 'TooManyRequests', description: 'Rate limited; `Retry-After` says when to retry' },
  503: {
    name: 'Unavailable',
    description: 'Shutting down, or the database cannot make writes durable (`error` says which)',
  },
} as const

export type ErrorStatus = keyof typeof ERROR_RESPONSES

/** A reference to the named response of an error status. */
export const errorRef = (status: ErrorStatus) => ({
  $ref: `#/components/responses/${ERROR_RESPONSES[status].name}`,
})

export interface DocOptions {
  /** Needs no credential (`security: []`). */
  public?: boolean
  /** Needs a browser session: a person token is 403 (docs/decisions.md "Tokens and access"). */
  session?: boolean
  /** Statuses this route gives beyond those its method, path and guard imply. */
  errors?: readonly ErrorStatus[]
}

/** A route's OpenAPI details; `id` is its operationId (unique, camelCase). */
export function doc(
  id: string,
  tag: string,
  summary: string,
  ok?: TSchema,
  options: DocOptions = {},
) {
  return {
    operationId: id,
    tags: [tag],
    summary,
    ...(options.public ? { security: [] } : {}),
    ...(options.session ? { security: [{ session: [] }] } : {}),
    responses: {
      200: {
        description: 'OK',
        ...(ok ? { content: { 'application/json': { schema: ok } } } : {}),
      },
      ...Object.fromEntries((options.errors ?? []).map((status) => [status, errorRef(status)])),
    },
  }
}
