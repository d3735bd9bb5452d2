import { afterEach, expect, test } from 'bun:test'
import { clientIp } from '../../src/core/client-address.ts'
import type { Logger } from '../../src/core/log.ts'
import { startTestServer, type TestServer } from '../harness.ts'

const peer = (address: string) => ({
  requestIP: () => ({ address, family: 'IPv4' as const, port: 1 }),
})
const req = (xff?: string) =>
  new Request('http://h/x', { headers: xff ? { 'x-forwarded-for': xff } : {} })

test('without trust, X-Forwarded-For is ignored: the peer address counts', () => {
  expect(clientIp(req('1.2.3.4'), peer('203.0.113.9'), false)).toBe('203.0.113.9')
  expect(clientIp(req(), peer('::ffff:10.0.0.1'), false)).toBe('10.0.0.1')
  expect(clientIp(req(), undefined, false)).toBeUndefined()
})

test('with trust, only the last entry (added by the proxy) is believed', () => {
  // A client sends a spoofed header; the proxy appends the address it really saw.
  expect(clientIp(req('6.6.6.6, 198.51.100.7'), peer('127.0.0.1'), true)).toBe('198.51.100.7')
  expect(clientIp(req('198.51.100.7'), peer('127.0.0.1'), true)).toBe('198.51.100.7')
  expect(clientIp(req('[2001:DB8::1]:443'), peer('127.0.0.1'), true)).toBe('2001:db8::1')
  expect(clientIp(req('198.51.100.7:5555'), peer('127.0.0.1'), true)).toBe('198.51.100.7')
  // No header, or garbage in the last entry: the peer.
  expect(clientIp(req(), peer('127.0.0.1'), true)).toBe('127.0.0.1')
  expect(clientIp(req('1.2.3.4, not-an-ip'), peer('127.0.0.1'), true)).toBe('127.0.0.1')
  expect(clientIp(req('1.2.3.999'), peer('127.0.0.1'), true)).toBe('127.0.0.1')
})

let server: TestServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** The request log's line for a GET /health that claims 6.6.6.6, trusting a proxy or not. */
async function logLineFor(trustProxy: boolean): Promise<string> {
  await server?.close()
  const lines: string[] = []
  const log: Logger = { info: (m) => lines.push(m), warn: () => {}, error: () => {} }
  server = await startTestServer({ listen: true, owner: false, trustProxy, log })
  await fetch(`${server.url}/health?secret=1`, { headers: { 'x-forwarded-for': '6.6.6.6' } })
  return lines.find((l) => l.includes('/health')) ?? ''
}

test('the request log names the client by the same rule', async () => {
  expect(await logLineFor(false)).toMatch(/^127\.0\.0\.1 GET \/health 200 /)
  expect(await logLineFor(true)).toMatch(/^6\.6\.6\.6 GET \/health 200 /)
})
