import { expect, test } from 'bun:test'
import { WriteLimiter } from '../../src/core/rate-limit.ts'
import { limitKey } from '../../src/core/request-ip.ts'

test('IPv6 addresses count against their /64; IPv4 as they are', () => {
  expect(limitKey('2001:db8:1:2:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:1:2::/64')
  expect(limitKey('2001:db8:1:2::1')).toBe('2001:db8:1:2::/64')
  expect(limitKey('2001:0db8:0001:0002:ffff::')).toBe('2001:db8:1:2::/64')
  expect(limitKey('::1')).toBe('0:0:0:0::/64')
  expect(limitKey('fe80::1')).toBe('fe80:0:0:0::/64')
  expect(limitKey('2001:db8::')).toBe('2001:db8:0:0::/64')
  expect(limitKey('203.0.113.7')).toBe('203.0.113.7')
  expect(limitKey('local')).toBe('local')
})

test('a limiter forgets idle keys even when nobody is refused', () => {
  let now = 0
  const limiter = new WriteLimiter(10, () => now)
  for (let i = 0; i < 5000; i++) {
    now += 100 // each key is seen once, and a new one every 100 ms
    expect(limiter.take(`client-${i}`)).toBe(0)
  }
  // Only keys touched within the last minute (about 600) may remain, not all 5000.
  expect(limiter.size).toBeLessThan(2000)
})

test('a limiter refuses past its rate with the seconds to wait', () => {
  const now = 0
  const limiter = new WriteLimiter(2, () => now)
  expect(limiter.take('a')).toBe(0)
  expect(limiter.take('a')).toBe(0)
  expect(limiter.take('a')).toBe(30)
  expect(limiter.take('b')).toBe(0)
})
