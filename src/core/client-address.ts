import type { Server } from 'bun'
import { socketRequest } from './http/front-door.ts'

/**
 * The address of the client behind a request.
 *
 * Without `trustProxy`, the peer of the TCP connection: `X-Forwarded-For` is ignored, because a
 * client that reaches Hark directly could put anything in it (and so dodge a per-IP limit).
 *
 * With `trustProxy` (Hark runs behind exactly one reverse proxy, and is reachable only through
 * it), the last `X-Forwarded-For` entry: the one the proxy appended for the peer it saw. Entries
 * before it came from the client and are never believed. Without the header, the peer.
 */
export function clientIp(
  request: Request,
  server: Pick<Server<unknown>, 'requestIP'> | undefined,
  trustProxy: boolean,
): string | undefined {
  const peer = peerAddress(request, server)
  if (!trustProxy) return peer
  const forwarded = request.headers.get('x-forwarded-for')
  if (!forwarded) return peer
  const last = forwarded.split(',').at(-1)?.trim() ?? ''
  const ip = normalize(last)
  return ip ?? peer
}

function peerAddress(
  request: Request,
  server: Pick<Server<unknown>, 'requestIP'> | undefined,
): string | undefined {
  try {
    const address = server?.requestIP(request)?.address
    return address ? stripMappedV4(address) : undefined
  } catch {
    return undefined // a request not from this server's sockets (app.handle() in tests)
  }
}

const stripMappedV4 = (a: string) => (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(a) ? a.slice(7) : a)

/** An IPv4 or IPv6 address (`[v6]:port` and `v4:port` forms unwrapped), else undefined. */
function normalize(raw: string): string | undefined {
  let a = raw
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::\d+)?$/.exec(a)
  if (bracketed) a = bracketed[1] as string
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(a)) a = a.slice(0, a.lastIndexOf(':'))
  if (/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.test(a)) {
    return a.split('.').every((o) => Number(o) <= 255) ? a : undefined
  }
  if (/^[0-9a-fA-F:.]+$/.test(a) && a.includes(':') && a.length <= 45) {
    return stripMappedV4(a.toLowerCase())
  }
  return undefined
}

/** What finding a request's client address needs of the server. */
export interface AddressHost {
  server?: Pick<Server<unknown>, 'requestIP'>
  config: { trustProxy?: boolean }
}

/**
 * Who a per-IP limit counts a request against: the socket's peer (or, behind a trusted proxy,
 * the address it forwarded), with IPv6 addresses cut to their /64 — one client usually holds a
 * whole /64 and could otherwise use a fresh address per request. Without a listening server
 * (tests driving `app.handle()`), every request shares one bucket.
 */
export const requestIp = (host: AddressHost, request: Request): string =>
  limitKey(
    clientIp(socketRequest(request), host.server, host.config.trustProxy === true) ?? 'local',
  )

/** `2001:db8:1:2:aaaa::1` → `2001:db8:1:2::/64`; IPv4 and anything else unchanged. */
export function limitKey(address: string): string {
  if (!address.includes(':')) return address
  const [head = '', tail] = address.split('::') as [string, string | undefined]
  const left = head ? head.split(':') : []
  const right = tail ? tail.split(':') : []
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right]
  const prefix = groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')
  return `${prefix}::/64`
}
