import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { fail } from '../server/errors.ts'

/**
 * Where the server may send pushes. A subscription's endpoint is a URL the person's browser
 * hands us, so anyone with an account could otherwise make the server POST to its own
 * loopback, the LAN or a cloud metadata address. A real push service (FCM, Mozilla, Apple,
 * WNS) is an https URL on a public DNS name; anything else needs the operator's explicit
 * `--push-allow-hosts` (a self-hosted push service, or a test's local receiver).
 */

/** Names that never leave the machine or the LAN, whatever DNS says. */
const LOCAL_NAMES = /(^|\.)(localhost|local|internal|lan|home|arpa|localdomain)$/i

/** True for loopback, private, link-local, CGNAT, unspecified, multicast and ULA addresses. */
export function isPrivateAddress(address: string): boolean {
  const v = isIP(address)
  if (v === 4) {
    const [a = 0, b = 0] = address.split('.').map(Number)
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 198 && (b === 18 || b === 19)) ||
      a >= 224
    )
  }
  if (v === 6) {
    const x = address.toLowerCase()
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(x)
    if (mapped) return isPrivateAddress(mapped[1] as string)
    return (
      x === '::' ||
      x === '::1' ||
      /^f[cd]/.test(x) || // unique local
      /^fe[89ab]/.test(x) || // link-local
      /^ff/.test(x) // multicast
    )
  }
  return true
}

/** `host` or `host:port`, as an allow-list entry matches it. */
const allowed = (url: URL, allow: readonly string[]) =>
  allow.includes(url.hostname.toLowerCase()) || allow.includes(url.host.toLowerCase())

export type Resolver = (hostname: string) => Promise<string[]>

export const dnsResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true })).map((a) => a.address)

/**
 * Checks an endpoint before it is stored and again before each send (DNS may have changed).
 * Throws a 400 on `endpoint` naming what is wrong.
 */
export async function checkEndpoint(
  raw: string,
  allow: readonly string[],
  resolve: Resolver,
): Promise<URL> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw fail.invalid('endpoint', 'must be an absolute https URL')
  }
  if (url.username || url.password) throw fail.invalid('endpoint', 'must not carry credentials')
  if (allowed(url, allow)) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw fail.invalid('endpoint', 'must be an http(s) URL')
    }
    return url
  }
  if (url.protocol !== 'https:') throw fail.invalid('endpoint', 'must be an https URL')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) {
    throw fail.invalid('endpoint', 'must name a push service by DNS name, not an IP address')
  }
  if (!host.includes('.') || LOCAL_NAMES.test(host.replace(/\.$/, ''))) {
    throw fail.invalid('endpoint', `${host} is not a public push service`)
  }
  let addresses: string[]
  try {
    addresses = await resolve(host)
  } catch {
    throw fail.invalid('endpoint', `${host} does not resolve`)
  }
  if (addresses.length === 0 || addresses.some(isPrivateAddress)) {
    throw fail.invalid('endpoint', `${host} resolves to a private or loopback address`)
  }
  return url
}
