import type { TSchema } from '@sinclair/typebox'

/**
 * OpenAPI details of a route: its summary and the schema of its 200 answer. Answers are
 * documented, not validated at run time: the services build them from typed records.
 */
export function doc(tag: string, summary: string, ok?: TSchema, security = true) {
  return {
    tags: [tag],
    summary,
    ...(security ? {} : { security: [] }),
    responses: {
      200: {
        description: 'OK',
        ...(ok ? { content: { 'application/json': { schema: ok } } } : {}),
      },
      default: {
        description: 'An error: `{ "error": "...", "field"?: "..." }`',
      },
    },
  }
}
