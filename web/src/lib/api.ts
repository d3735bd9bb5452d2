/**
 * Talking to the server: JSON in and out, the session cookie rides along (same origin), and
 * every failure becomes an `ApiError` carrying the server's own message, which names the field.
 * The app calls the server through client.ts, which holds every path; this is its transport.
 */
import { reachable, unreachable } from './connection.ts'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly field?: string,
  ) {
    super(message)
  }
}

interface Options {
  signal?: AbortSignal
  /** A raw body (a file upload) instead of JSON. */
  raw?: Blob
  contentType?: string
  /** More request headers (an `Idempotency-Key`). */
  headers?: Record<string, string>
}

export async function api<T>(
  method: string,
  path: string,
  json?: unknown,
  options: Options = {},
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
  let body: BodyInit | undefined
  if (options.raw) {
    body = options.raw
    headers['content-type'] = options.contentType || 'application/octet-stream'
  } else if (json !== undefined) {
    body = JSON.stringify(json)
    headers['content-type'] = 'application/json'
  }
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      body,
      credentials: 'same-origin',
      signal: options.signal,
    })
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error
    // Every loop that retries reads this through the offline cue (connection.ts).
    unreachable()
    throw new ApiError(0, 'Cannot reach the server. Check your connection.')
  }
  reachable()
  const text = await response.text()
  let data: unknown
  try {
    data = text ? JSON.parse(text) : undefined
  } catch {
    data = undefined
  }
  if (!response.ok) {
    const e = (data ?? {}) as { error?: string; field?: string }
    throw new ApiError(
      response.status,
      e.error ?? `${response.status} ${response.statusText}`,
      e.field,
    )
  }
  return data as T
}

/**
 * Whether trying the same request again may work: the server was out of reach, or said it is
 * busy or failing. A 4xx other than 408/429 is an answer that another try will not change.
 */
export const retryable = (error: unknown) =>
  error instanceof ApiError &&
  (error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500)

/** A human sentence for any error thrown at the UI. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message
  if (error instanceof Error) {
    // WebAuthn: the person closed the prompt or it timed out.
    if (error.name === 'NotAllowedError') return 'The passkey prompt was closed or timed out.'
    return error.message
  }
  return String(error)
}
