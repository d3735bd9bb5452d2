import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { fail } from '../core/errors.ts'

/**
 * Where the server may send pushes. A subscription's endpoint is a URL the person's browser
 * hands us, so anyone with an account could otherwise make the server POST to its own
 * loopback, the LAN or a cloud metadata address. A real push service (FCM, Mozilla, Apple,
 * WNS) is an https URL on a public DNS name; anything else needs the operator's explicit
 * `--push-allow-hosts` (a self-hosted push service, or a test's local receiver).
 */

/** Names that never leave the machine or the LAN, whatever DNS says. */
const LOCAL_NAMES = /(^|\.)(localhost|local|internal|lan|home|arpa|localdomain)$/i

/** An IPv4 address as its 4 bytes (the caller has checked it with `isIP`). */
const v4Bytes = (address: string): number[] => address.split('.').map(Number)

/** Within `prefix`/`bits` of IPv4 (`prefix` as dotted bytes). */
function inV4(bytes: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff
    if (((bytes[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false
  }
  return true
}

/**
 * IPv4 ranges that are not the public internet (IANA special-purpose registry): this network,
 * private, shared (CGNAT), loopback, link-local, IETF protocol assignments, documentation,
 * 6to4 relay, benchmarking, multicast, reserved and broadcast.
 */
const V4_BLOCKED: readonly [number[], number][] = [
  [[0], 8],
  [[10], 8],
  [[100, 64], 10],
  [[127], 8],
  [[169, 254], 16],
  [[172, 16], 12],
  [[192, 0, 0], 24],
  [[192, 0, 2], 24],
  [[192, 88, 99], 24],
  [[192, 168], 16],
  [[198, 18], 15],
  [[198, 51, 100], 24],
  [[203, 0, 113], 24],
  [[224], 4],
  [[240], 4], // includes 255.255.255.255
]

const privateV4 = (bytes: readonly number[]): boolean =>
  V4_BLOCKED.some(([prefix, bits]) => inV4(bytes, prefix, bits))

/** An IPv6 address as its 8 16-bit words, a dotted IPv4 tail included; undefined if malformed. */
export function ipv6Words(address: string): number[] | undefined {
  let text = address.replace(/%.*$/, '') // a zone id (fe80::1%eth0) names an interface
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (tail) {
    const [a = 0, b = 0, c = 0, d = 0] = v4Bytes(tail[1] as string)
    text = `${text.slice(0, tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const part = (s: string | undefined) => (s ? s.split(':') : [])
  const head = part(halves[0])
  const rest = part(halves[1])
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...(halves.length === 2 ? Array(missing).fill('0') : []), ...rest]
  const words = groups.map((g) =>
    /^[0-9a-f]{1,4}$/i.test(g) ? Number.parseInt(g, 16) : Number.NaN,
  )
  return words.some(Number.isNaN) ? undefined : words
}

/** The IPv4 address in words 6 and 7, as bytes. */
const lastV4 = (w: readonly number[]) => {
  const hi = w[6] ?? 0
  const lo = w[7] ?? 0
  return [hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]
}

/**
 * IPv6: only global unicast (2000::/3) is public, which leaves out unspecified, loopback,
 * unique local, link-local, site-local (fec0::/10), multicast and discard-only. Forms that
 * carry an IPv4 address (IPv4-compatible ::a.b.c.d, IPv4-mapped ::ffff:a.b.c.d, IPv4-
 * translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16) are judged by that IPv4
 * address. Within 2000::/3, the IETF protocol block 2001::/23 (Teredo, ORCHID, ...) and the
 * documentation ranges 2001:db8::/32 and 3fff::/20 are refused too.
 */
function privateV6(w: readonly number[]): boolean {
  const [w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0] = w
  const zeroHigh = w0 === 0 && w1 === 0 && w2 === 0 && w3 === 0
  // ::/96 (IPv4-compatible; :: and ::1 fall in 0.0.0.0/8), ::ffff:0:0/96, ::ffff:0:0:0/96
  if (zeroHigh && ((w4 === 0 && (w5 === 0 || w5 === 0xffff)) || (w4 === 0xffff && w5 === 0))) {
    return privateV4(lastV4(w))
  }
  // NAT64 well-known prefix 64:ff9b::/96 (the local-use 64:ff9b:1::/48 is outside 2000::/3).
  if (w0 === 0x64 && w1 === 0xff9b && w2 === 0 && w3 === 0 && w4 === 0 && w5 === 0) {
    return privateV4(lastV4(w))
  }
  if ((w0 & 0xe000) !== 0x2000) return true
  // 6to4: the IPv4 address is words 1 and 2.
  if (w0 === 0x2002) return privateV4([w1 >> 8, w1 & 0xff, w2 >> 8, w2 & 0xff])
  if (w0 === 0x2001 && w1 < 0x200) return true // 2001::/23
  if (w0 === 0x2001 && w1 === 0xdb8) return true
  if ((w0 & 0xfff0) === 0x3ff0) return true // 3fff::/20
  return false
}

/**
 * True for any address that is not on the public internet (see the two tables above), and
 * for anything that is not an IP address at all.
 */
export function isPrivateAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '')
  const v = isIP(bare.replace(/%.*$/, ''))
  if (v === 4) return privateV4(v4Bytes(bare))
  if (v === 6) {
    const words = ipv6Words(bare)
    return words === undefined || privateV6(words)
  }
  return true
}

/** A URL's hostname without the brackets of an IPv6 address. */
const bare = (hostname: string) => hostname.replace(/^\[|\]$/g, '')

/** `host` or `host:port`, as an allow-list entry matches it. */
const allowed = (url: URL, allow: readonly string[]) =>
  allow.includes(url.hostname.toLowerCase()) || allow.includes(url.host.toLowerCase())

export type Resolver = (hostname: string) => Promise<string[]>

export const dnsResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true })).map((a) => a.address)

/** An endpoint as checked: its URL, and the address the push must go to. */
export interface CheckedEndpoint {
  url: URL
  /**
   * The IP address the check approved. The push connects to it (`pinnedRequest`) and never
   * looks the name up again: a second lookup could answer otherwise (DNS rebinding) and send
   * the push to an address the check never saw.
   */
  address: string
}

/**
 * Checks an endpoint before it is stored and again before each send (DNS may have changed).
 * Throws a 400 on `endpoint` naming what is wrong. The name is looked up once, with `resolve`;
 * an allowed host's too (not checked, but pinned all the same).
 */
export async function checkEndpoint(
  raw: string,
  allow: readonly string[],
  resolve: Resolver,
): Promise<CheckedEndpoint> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw fail.invalid('endpoint', 'must be an absolute https URL')
  }
  if (url.username || url.password) throw fail.invalid('endpoint', 'must not carry credentials')
  const host = bare(url.hostname)
  if (allowed(url, allow)) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw fail.invalid('endpoint', 'must be an http(s) URL')
    }
    return { url, address: isIP(host) ? host : ((await lookUp(host, resolve))[0] as string) }
  }
  if (url.protocol !== 'https:') throw fail.invalid('endpoint', 'must be an https URL')
  if (isIP(host)) {
    throw fail.invalid('endpoint', 'must name a push service by DNS name, not an IP address')
  }
  if (!host.includes('.') || LOCAL_NAMES.test(host.replace(/\.$/, ''))) {
    throw fail.invalid('endpoint', `${host} is not a public push service`)
  }
  const addresses = await lookUp(host, resolve)
  if (addresses.some(isPrivateAddress)) {
    throw fail.invalid('endpoint', `${host} resolves to a private or loopback address`)
  }
  return { url, address: addresses[0] as string }
}

/** The addresses of `host`, at least one (what is not an IP address is judged private). */
async function lookUp(host: string, resolve: Resolver): Promise<string[]> {
  let addresses: string[]
  try {
    addresses = await resolve(host)
  } catch {
    throw fail.invalid('endpoint', `${host} does not resolve`)
  }
  if (addresses.length === 0) throw fail.invalid('endpoint', `${host} does not resolve`)
  return addresses
}

/**
 * The request of a push to a checked endpoint, made to the checked address: the URL's host
 * becomes the address, and the name goes where the server reads it (the `Host` header, and
 * for https the TLS server name, which is also what the certificate is checked against).
 */
export function pinnedRequest(checked: CheckedEndpoint): {
  url: URL
  host: string
  tls?: { serverName: string }
} {
  const { url, address } = checked
  const to = new URL(url)
  to.hostname = isIP(address) === 6 ? `[${address}]` : address
  // A setter given something it cannot take leaves the name: never send by the name.
  if (!isIP(bare(to.hostname))) throw new Error(`cannot address ${address} for ${url.host}`)
  const name = bare(url.hostname)
  return {
    url: to,
    host: url.host,
    tls: url.protocol === 'https:' && !isIP(name) ? { serverName: name } : undefined,
  }
}
