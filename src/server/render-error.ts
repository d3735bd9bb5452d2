import { ValidationError } from 'elysia'
import { authErrorFor } from '../access/guards.ts'
import type { Ctx } from '../core/context.ts'
import { errorResponse, HarkError, pointerToField } from '../core/errors.ts'
import { pathOf } from '../core/http/front-door.ts'
import { BodyError } from '../core/http/json-body.ts'
import { isAppPath, wantsPage } from './webapp/headers.ts'
import { appNotFound } from './webapp/routes.ts'

/** Elysia reports validation failures as 422 with the input echoed; we answer 400 naming the field. */
function validationResponse(error: ValidationError): Response {
  const first = error.valueError
  const where = error.type === 'body' ? '' : `${error.type} `
  const field = first ? pointerToField(first.path) : ''
  const message =
    first?.message.replace(/^Expected required property$/, 'is required') ?? 'is invalid'
  if (!field) return errorResponse(400, `${where || 'request body '}${message.toLowerCase()}`)
  return errorResponse(
    400,
    `${field}: ${message.charAt(0).toLowerCase()}${message.slice(1)}`,
    field,
  )
}

/**
 * Every failure of a request as its answer, `{ "error": "...", "field"?: "..." }`: for Elysia's
 * `onError` (which gives its own `code`) and for the lean path.
 */
export async function renderError(
  ctx: Ctx,
  request: Request,
  error: unknown,
  code?: unknown,
): Promise<Response> {
  if (error instanceof HarkError) {
    return errorResponse(error.status, error.message, error.field, error.headers)
  }
  if (error instanceof ValidationError) return validationResponse(error)
  // Elysia formats a failed value with `${value}`, which throws on an object whose
  // `toString` is not a function (`{"text": {"toString": 0}}`, found by test/fuzz): the
  // request still failed validation, so it is a 400, not a 500.
  if (error instanceof TypeError && error.stack?.includes('new ValidationError')) {
    return errorResponse(400, 'request body: a value has the wrong type')
  }
  switch (code) {
    case 'PARSE': {
      const denied = await authErrorFor(ctx, request)
      if (denied instanceof HarkError) {
        return errorResponse(denied.status, denied.message, denied.field, denied.headers)
      }
      // Our parser's refusal (size, depth, encoding, media type) comes wrapped in Elysia's.
      const cause = (error as Error).cause
      if (cause instanceof BodyError) return errorResponse(cause.status, cause.message)
      return errorResponse(400, 'request body is not valid JSON')
    }
    case 'NOT_FOUND': {
      const path = pathOf(request.url)
      if (wantsPage(request) && isAppPath(path)) return await appNotFound(request)
      return errorResponse(404, `no route ${request.method} ${path}`)
    }
    case 'INVALID_COOKIE_SIGNATURE':
      return errorResponse(401, 'invalid session')
  }
  ctx.log.error(`${request.method} ${pathOf(request.url)}: ${(error as Error)?.stack ?? error}`)
  return errorResponse(500, 'internal error')
}
