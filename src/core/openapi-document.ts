import type { TSchema } from '@sinclair/typebox'
import { ERROR_RESPONSES, ErrorBody, type ErrorStatus, errorRef } from './docs.ts'

/**
 * Assembles the OpenAPI document (`GET /v1/openapi.json`) from the routes' generated paths:
 *
 * - every schema carrying a TypeBox `$id` becomes `components.schemas[$id]`, referenced with
 *   `$ref` wherever it appears (the first appearance, answers first, is the one kept; `named`
 *   schemas are kept as given and win: the documented form of a block, say);
 * - each operation gets the error responses its method, path and guard imply (`errorsOf`) and
 *   its security: the agent's bearer token, the person's token or browser session cookie;
 * - an agent write takes an optional `Idempotency-Key` header (docs/decisions.md).
 *
 * Pure JSON work: no Elysia here (`server/openapi.ts` serves it).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }
type JsonObject = { [key: string]: Json }
type Operation = JsonObject & { responses?: JsonObject; parameters?: Json[]; security?: Json }

export interface DocumentParts {
  info: { title: string; version: string; description: string }
  /** `paths` as Elysia's OpenAPI generator gives them (TypeBox schemas inside). */
  paths: unknown
  /** Schemas with `$id` put into components as they are, before any found in the paths. */
  named: readonly TSchema[]
  /** The browser session cookie's name. */
  cookie: string
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const
const WRITES = new Set(['post', 'put', 'patch', 'delete'])
const AGENT_SECURITY: Json = [{ bearer: [] }]
const PERSON_SECURITY: Json = [{ bearer: [] }, { session: [] }]

/** A deep copy as plain JSON: TypeBox's symbols and `undefined` go. */
const plain = (value: unknown): Json => JSON.parse(JSON.stringify(value ?? null)) as Json

const isObject = (value: Json | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Moves every `$id` schema into `schemas` and answers the tree with `$ref`s in their place. */
function hoist(node: Json, schemas: JsonObject): Json {
  if (Array.isArray(node)) return node.map((item) => hoist(item, schemas))
  if (!isObject(node)) return node
  const { $id, ...rest } = node
  const out: JsonObject = {}
  for (const [key, value] of Object.entries(rest)) out[key] = hoist(value, schemas)
  if (typeof $id !== 'string') return out
  // Elysia writes `Message | null` in a request body as `{ ...Message, type: ['object', 'null'] }`.
  const nullable = Array.isArray(out.type) && out.type.includes('null')
  if (nullable && Array.isArray(out.type)) out.type = out.type.filter((type) => type !== 'null')
  if (Array.isArray(out.type) && out.type.length === 1) out.type = out.type[0] ?? null
  if (!(($id as string) in schemas)) schemas[$id] = out
  const ref: JsonObject = { $ref: `#/components/schemas/${$id}` }
  return nullable ? { anyOf: [ref, { type: 'null' }] } : ref
}

/** The errors a route can answer, beyond those its `doc()` names. */
export function errorsOf(method: string, path: string, operation: Operation): ErrorStatus[] {
  const open = Array.isArray(operation.security) && operation.security.length === 0
  const errors: ErrorStatus[] = []
  const hasBody = operation.requestBody !== undefined
  const hasInput = hasBody || (operation.parameters?.length ?? 0) > 0
  if (!open || hasInput) errors.push(400)
  if (!open) errors.push(401, 403)
  if (path.includes('{')) errors.push(404)
  // An agent write may repeat an Idempotency-Key with another request.
  if (!open && !isPersonPath(path) && WRITES.has(method) && method !== 'delete') errors.push(409)
  if (hasBody) errors.push(413)
  // Writes count against the channel's (or the person's) write limit.
  if (!open && WRITES.has(method)) errors.push(429)
  return errors
}

const isPersonPath = (path: string) => path.startsWith('/v1/app/')

const IDEMPOTENCY_KEY: Json = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the write safe to retry: within 24 h the same key and request answer the first result again (`Idempotent-Replayed: true`) and write nothing; the same key with another request is 409',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
}

function finishOperation(method: string, path: string, operation: Operation): void {
  if (operation.security === undefined) {
    operation.security = isPersonPath(path) ? PERSON_SECURITY : AGENT_SECURITY
  }
  const responses = operation.responses ?? {}
  for (const status of errorsOf(method, path, operation)) {
    responses[status] ??= errorRef(status)
  }
  responses.default ??= {
    description: 'Any other error',
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  }
  operation.responses = Object.fromEntries(
    Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)),
  )
  const open = Array.isArray(operation.security) && operation.security.length === 0
  if (!open && !isPersonPath(path) && WRITES.has(method) && method !== 'delete') {
    operation.parameters = [...(operation.parameters ?? []), IDEMPOTENCY_KEY]
  }
}

function errorResponses(): JsonObject {
  const out: JsonObject = {}
  for (const [status, { name, description }] of Object.entries(ERROR_RESPONSES)) {
    const headers: JsonObject = {}
    if (status === '401') {
      headers['WWW-Authenticate'] = { schema: { type: 'string', const: 'Bearer' } }
    }
    if (status === '429') {
      headers['Retry-After'] = {
        description: 'whole seconds to wait',
        schema: { type: 'integer', minimum: 0 },
      }
    }
    out[name] = {
      description,
      ...(Object.keys(headers).length ? { headers } : {}),
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    }
  }
  return out
}

/** The whole document. */
export function openApiDocument(parts: DocumentParts): JsonObject {
  const schemas: JsonObject = {}
  for (const schema of [ErrorBody, ...parts.named]) hoist(plain(schema), schemas)
  const paths = plain(parts.paths)
  if (!isObject(paths)) throw new Error('OpenAPI paths: expected an object')
  const operations: [string, string, Operation][] = []
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const operation = isObject(item) ? item[method] : undefined
      if (isObject(operation)) operations.push([method, path, operation as Operation])
    }
  }
  // Answers first: their schemas are TypeBox's own, while request bodies come rewritten.
  for (const [, , operation] of operations) {
    if (operation.responses) operation.responses = hoist(operation.responses, schemas) as JsonObject
  }
  for (const [method, path, operation] of operations) {
    for (const [key, value] of Object.entries(operation)) operation[key] = hoist(value, schemas)
    finishOperation(method, path, operation)
  }
  return {
    openapi: '3.1.0',
    info: parts.info,
    security: AGENT_SECURITY,
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
      responses: errorResponses(),
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An agent token (`hark_agent_…`) or, on `/v1/app/`, a person token',
        },
        session: {
          type: 'apiKey',
          in: 'cookie',
          name: parts.cookie,
          description: "The person's browser session (set by a login)",
        },
      },
    },
  }
}
