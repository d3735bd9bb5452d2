import { errorResponse } from '../errors.ts'

/**
 * What every request passes before routing, on the real server: its Host must make a URL, and a
 * very short one is set aside so that routing sees the path (Elysia looks for the path's `/`
 * from the 12th character of the URL on, so `Host: a` would hide `/v1/...` from it).
 */

/** The path of a request's URL, without the query; never throws, whatever the Host held. */
export function pathOf(url: string): string {
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start === -1) return '/'
  const query = url.indexOf('?', start)
  return query === -1 ? url.slice(start) : url.slice(start, query)
}

/** The request Bun handed over, kept on a stand-in request so the socket's APIs still find it. */
const SOCKET_REQUEST = Symbol('hark.socketRequest')

interface StandIn extends Request {
  [SOCKET_REQUEST]?: Request
}

/**
 * The request to ask Bun's server about (`timeout`, `requestIP`): Bun knows only the object it
 * made, not a stand-in made from it.
 */
export const socketRequest = (request: Request): Request =>
  (request as StandIn)[SOCKET_REQUEST] ?? request

/** The shortest URL prefix (`http://abcd`) whose path Elysia finds. */
const ROUTABLE_PATH_START = 11

/**
 * A 400 for a Host header that makes no URL (`[`, `%zz`, spaces); for a short Host
 * (`a`, `pi`), a stand-in for the request at `http://localhost` carrying the same method,
 * headers and body. Nothing in Hark reads the Host (links come from `--base-url`).
 */
export function admitHost(request: Request): Request | Response {
  const url = request.url
  if (!URL.canParse(url)) return errorResponse(400, 'the Host header is not a valid host name')
  const start = url.indexOf('/', url.indexOf('//') + 2)
  if (start >= ROUTABLE_PATH_START) return request
  const standIn: StandIn = new Request(`http://localhost${url.slice(start)}`, request)
  standIn[SOCKET_REQUEST] = request
  return standIn
}
