import { describe, expect, test } from 'bun:test'
import {
  checkEndpoint,
  ipv6Words,
  isPrivateAddress,
  pinnedRequest,
} from '../../src/push/endpoint.ts'

/** Addresses a push endpoint's name must never resolve to. */
const PRIVATE = [
  // IPv4 special-purpose ranges
  '0.0.0.0',
  '0.1.2.3',
  '10.0.0.1',
  '100.64.0.1',
  '100.127.255.254',
  '127.0.0.1',
  '127.255.255.255',
  '169.254.169.254',
  '172.16.0.1',
  '172.31.255.255',
  '192.0.0.1', // IETF protocol assignments
  '192.0.0.170', // NAT64 discovery
  '192.0.2.1', // TEST-NET-1
  '192.88.99.1', // 6to4 relay anycast
  '192.168.1.1',
  '198.18.0.1', // benchmarking
  '198.19.255.255',
  '198.51.100.7', // TEST-NET-2
  '203.0.113.9', // TEST-NET-3
  '224.0.0.1', // multicast
  '239.255.255.250',
  '240.0.0.1', // reserved
  '255.255.255.255',
  // IPv6 native
  '::',
  '::1',
  '0:0:0:0:0:0:0:1',
  'fc00::1',
  'fd12:3456:789a::1',
  'fe80::1',
  'fe80::1%eth0',
  'febf::1',
  'fec0::1', // site-local (deprecated, fec0::/10)
  'feff::1',
  'ff02::1',
  'ff0e::1',
  '100::1', // discard-only
  '2001:db8::1', // documentation
  '3fff::1', // documentation (RFC 9637)
  '2001::1', // Teredo
  '2001:10::1', // ORCHID
  '64:ff9b:1::1', // local-use NAT64
  // IPv4 inside IPv6
  '::127.0.0.1', // IPv4-compatible
  '::7f00:1',
  '::10.0.0.1',
  '::ffff:127.0.0.1', // IPv4-mapped
  '::ffff:7f00:1',
  '::FFFF:10.1.2.3',
  '0:0:0:0:0:ffff:169.254.169.254',
  '::ffff:0:127.0.0.1', // IPv4-translated
  '::ffff:0:a00:1',
  '64:ff9b::127.0.0.1', // NAT64
  '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
  '64:ff9b::192.168.0.1',
  '2002:7f00:1::1', // 6to4 of 127.0.0.1
  '2002:a00:1::', // 6to4 of 10.0.0.1
  '2002:c0a8:101::1', // 6to4 of 192.168.1.1
  '2002:a9fe:a9fe::1',
  '[::1]',
  // not addresses at all
  'localhost',
  '',
  '1:2:3:4:5:6:7:8:9',
  '1::2::3',
]

const PUBLIC = [
  '8.8.8.8',
  '1.1.1.1',
  '93.184.216.34',
  '142.250.180.10',
  '100.63.255.255', // just below shared space
  '100.128.0.1', // just above
  '172.15.255.255',
  '172.32.0.1',
  '192.0.1.1',
  '192.169.0.1',
  '198.17.255.255',
  '198.20.0.1',
  '223.255.255.255',
  '2a00:1450:4001:82b::200a', // Google
  '2606:4700:4700::1111', // Cloudflare
  '2001:4860:4860::8888', // Google DNS, outside 2001::/23
  '::ffff:8.8.8.8',
  '::ffff:142.250.180.10',
  '64:ff9b::8.8.8.8',
  '64:ff9b::808:808',
  '2002:808:808::1', // 6to4 of 8.8.8.8
  '::8.8.8.8',
]

describe('isPrivateAddress', () => {
  test.each(PRIVATE)('%p is refused', (address) => {
    expect(isPrivateAddress(address)).toBe(true)
  })
  test.each(PUBLIC)('%p is public', (address) => {
    expect(isPrivateAddress(address)).toBe(false)
  })
})

describe('ipv6Words', () => {
  test('expands ::, embedded IPv4 and zone ids', () => {
    expect(ipv6Words('::')).toEqual([0, 0, 0, 0, 0, 0, 0, 0])
    expect(ipv6Words('::1')).toEqual([0, 0, 0, 0, 0, 0, 0, 1])
    expect(ipv6Words('2001:db8::8:800:200c:417a')).toEqual([
      0x2001, 0xdb8, 0, 0, 0x8, 0x800, 0x200c, 0x417a,
    ])
    expect(ipv6Words('::ffff:192.168.1.2')).toEqual([0, 0, 0, 0, 0, 0xffff, 0xc0a8, 0x102])
    expect(ipv6Words('fe80::1%eth0')).toEqual([0xfe80, 0, 0, 0, 0, 0, 0, 1])
    expect(ipv6Words('1:2:3:4:5:6:7:8')).toEqual([1, 2, 3, 4, 5, 6, 7, 8])
    expect(ipv6Words('1:2:3:4:5:6:7:8:9')).toBeUndefined()
    expect(ipv6Words('1::2::3')).toBeUndefined()
    expect(ipv6Words('1:2:3:4:5:6:7::8')).toBeUndefined()
  })
})

describe('checkEndpoint', () => {
  const endpoint = 'https://push.example.com/send/abc'
  test.each([
    '127.0.0.1',
    '::ffff:10.0.0.1',
    '64:ff9b::169.254.169.254',
    '2002:a9fe:a9fe::1',
    'fec0::1',
    '192.0.0.8',
  ])('a name resolving to %p is refused', async (address) => {
    await expect(checkEndpoint(endpoint, [], async () => [address])).rejects.toThrow(
      /private or loopback/,
    )
  })

  test('one private address among public ones is enough to refuse', async () => {
    await expect(
      checkEndpoint(endpoint, [], async () => ['142.250.180.10', '64:ff9b::7f00:1']),
    ).rejects.toThrow(/private or loopback/)
    const checked = await checkEndpoint(endpoint, [], async () => [
      '142.250.180.10',
      '2a00:1450::1',
    ])
    expect(checked.url.href).toBe(endpoint)
    expect(checked.address).toBe('142.250.180.10')
  })

  test('the push is addressed to the checked address, the name kept for Host and TLS', () => {
    const v4 = pinnedRequest({ url: new URL(`${endpoint}?q=1`), address: '142.250.180.10' })
    expect([v4.url.href, v4.host, v4.tls]).toEqual([
      'https://142.250.180.10/send/abc?q=1',
      'push.example.com',
      { serverName: 'push.example.com' },
    ])
    const v6 = pinnedRequest({
      url: new URL('https://push.example.com:8443/x'),
      address: '2a00:1450::1',
    })
    expect([v6.url.href, v6.host, v6.tls]).toEqual([
      'https://[2a00:1450::1]:8443/x',
      'push.example.com:8443',
      { serverName: 'push.example.com' },
    ])
    // An allowed plain-http host: no TLS; an address it cannot carry is refused, not sent by name.
    const lan = pinnedRequest({ url: new URL('http://push.lan:8080/x'), address: '10.0.0.7' })
    expect([lan.url.href, lan.host, lan.tls]).toEqual([
      'http://10.0.0.7:8080/x',
      'push.lan:8080',
      undefined,
    ])
    expect(() =>
      pinnedRequest({ url: new URL('https://push.lan/x'), address: 'fe80::1%eth0' }),
    ).toThrow(/cannot address/)
  })

  test.each([
    'https://[::ffff:127.0.0.1]/push',
    'https://[64:ff9b::a00:1]/push',
    'https://[fec0::1]/push',
    'https://0x7f.0.0.1/push',
    'https://2130706433/push',
  ])('the IP literal %p is refused', async (raw) => {
    await expect(checkEndpoint(raw, [], async () => ['8.8.8.8'])).rejects.toThrow(/endpoint/)
  })
})
