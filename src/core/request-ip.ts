import type { Ctx } from '../server/context.ts'
import { clientIp } from './client-address.ts'
import { socketRequest } from './http/front-door.ts'

/**
 * Who a per-IP limit counts a request against: the socket's peer (or, behind a trusted proxy,
 * the address it forwarded), with IPv6 addresses cut to their /64 — one client usually holds a
 * whole /64 and could otherwise use a fresh address per request. Without a listening server
 * (tests driving `app.handle()`), every request shares one bucket.
 */
export const requestIp = (ctx: Ctx, request: Request): string =>
  limitKey(clientIp(socketRequest(request), ctx.server, ctx.config.trustProxy === true) ?? 'local')

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
