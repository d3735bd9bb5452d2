import { expect, test } from 'bun:test'
import { limitKey } from '../../src/core/client-address.ts'
import { RateLimiter } from '../../src/core/rate-limit.ts'
import { TestClock } from '../harness.ts'

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
  const clock = new TestClock(0)
  const limiter = new RateLimiter(10, 60_000, clock.now, 'too many')
  for (let i = 0; i < 5000; i++) {
    clock.advance(100) // each key is seen once, and a new one every 100 ms
    expect(limiter.tryTake(`client-${i}`)).toBe(true)
  }
  // Only keys touched within the last minute (about 600) may remain, not all 5000.
  expect(limiter.size).toBeLessThan(2000)
})

test('a limiter refuses past its rate with the seconds to wait', () => {
  const now = 0
  const limiter = new RateLimiter(2, 60_000, () => now, 'write rate limit reached')
  limiter.take('a')
  limiter.take('a')
  expect(() => limiter.take('a')).toThrow('write rate limit reached; retry in 30 s')
  expect(limiter.wait('a')).toBe(30)
  limiter.take('b')
})

test('a limit of 0 is off', () => {
  const limiter = new RateLimiter(0, 60_000, () => 0, 'never')
  for (let i = 0; i < 1000; i++) limiter.take('a')
  expect(limiter.size).toBe(0)
})
