/**
 * One request by hand, as the harness's `TestServer.request` sends it: any method, body,
 * credentials and Origin, answered by the server's handler (or its socket). test/harness.ts
 * re-exports the types.
 */

export interface RequestOptions {
  json?: unknown
  body?: BodyInit
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string
  /** A Cookie header: a session cookie (see `session()`). */
  cookie?: string
  /** The Origin header; `null` leaves it out. Defaults to the app's own, as its pages send it. */
  origin?: string | null
  headers?: Record<string, string>
}

export interface Reply {
  status: number
  /** The JSON answer parsed, or its text when it is not JSON, or undefined when empty. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read whatever the JSON holds
  body: any
  /** The answer's text as sent. */
  text: string
  headers: Headers
  setCookie: string | null
  /** `name=value` of the cookie this reply set, to send back as a Cookie header. */
  cookie?: string
}

/** One request by hand, through the server's handler (or socket). */
export async function request(
  s: { handle(request: Request): Promise<Response>; url: string },
  method: string,
  path: string,
  o: RequestOptions,
): Promise<Reply> {
  const headers: Record<string, string> = { ...o.headers }
  if (o.token !== undefined) headers.authorization = `Bearer ${o.token}`
  if (o.cookie) headers.cookie = o.cookie
  const origin = o.origin === undefined ? new URL(s.url).origin : o.origin
  if (origin !== null) headers.origin = origin
  let body = o.body
  if (o.json !== undefined) {
    headers['content-type'] = 'application/json'
    body = JSON.stringify(o.json)
  }
  const response = await s.handle(new Request(s.url + path, { method, headers, body }))
  const text = await response.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = text
  }
  const setCookie = response.headers.get('set-cookie')
  return {
    status: response.status,
    body: parsed,
    text,
    headers: response.headers,
    setCookie,
    cookie: setCookie?.split(';')[0],
  }
}
