import { ParseError } from 'elysia'

/**
 * The parser of routes whose JSON body may be left out (`POST /v1/pair/start`, say). Elysia
 * quietly drops a malformed optional body, so `{nope` would act like no body at all; here an
 * empty body is `{}` and anything else must be a JSON object, or it is a parse error (which the
 * error handler answers with 400 — after authentication, like every other parse error).
 */
export async function optionalJson({ request }: { request: Request }): Promise<unknown> {
  const text = await request.text()
  if (text.trim() === '') return {}
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new ParseError(error as Error)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ParseError(new Error('the request body must be a JSON object'))
  }
  return value
}
