import { describe, expect, test } from 'bun:test'
import { askKey, channelKey, pollFor, Waiters, type WaitOutcome } from '../../src/core/waiters.ts'
import { sleep, until } from '../harness.ts'
import { timed, track } from './fixtures.ts'

describe('Waiters', () => {
  test('a wake settles every waiter under the key as woken', async () => {
    const w = new Waiters()
    const a = w.wait('k', 10_000)
    const b = w.wait('k', 10_000)
    expect(w.size).toBe(2)
    w.wake('k')
    expect(await Promise.all([a, b])).toEqual(['woken', 'woken'])
    expect(w.size).toBe(0)
  })

  test('a wake touches only its own keys; several keys wake at once', async () => {
    const w = new Waiters()
    const a = track(w.wait('a', 10_000))
    const b = track(w.wait('b', 10_000))
    const c = track(w.wait('c', 10_000))
    w.wake('a', 'c', 'nobody-here')
    expect(await a.promise).toBe('woken')
    expect(await c.promise).toBe('woken')
    await sleep(10)
    expect(b.settled()).toBe(false)
    expect(w.size).toBe(1)
    w.wake('b')
    expect(await b.promise).toBe('woken')
    expect(w.size).toBe(0)
  })

  test('a waiter parked after a wake waits for the next one', async () => {
    const w = new Waiters()
    const first = w.wait('k', 10_000)
    w.wake('k')
    const second = track(w.wait('k', 10_000))
    expect(await first).toBe('woken')
    await sleep(10)
    expect(second.settled()).toBe(false)
    w.wake('k')
    expect(await second.promise).toBe('woken')
  })

  test('the timeout settles as timeout and removes the waiter', async () => {
    const w = new Waiters()
    const { value, ms } = await timed(w.wait('k', 50))
    expect(value).toBe('timeout')
    expect(ms).toBeGreaterThanOrEqual(40)
    expect(w.size).toBe(0)
  })

  test('ms <= 0 times out at once without parking', async () => {
    const w = new Waiters()
    const zero = w.wait('k', 0)
    const negative = w.wait('k', -5)
    expect(w.size).toBe(0)
    expect(await zero).toBe('timeout')
    expect(await negative).toBe('timeout')
  })

  test('an abort settles as aborted and removes the waiter', async () => {
    const w = new Waiters()
    const controller = new AbortController()
    const other = track(w.wait('k', 10_000))
    const aborted = w.wait('k', 10_000, controller.signal)
    expect(w.size).toBe(2)
    controller.abort()
    expect(await aborted).toBe('aborted')
    expect(w.size).toBe(1)
    expect(other.settled()).toBe(false)
    w.wake('k')
    expect(await other.promise).toBe('woken')
  })

  test('an already aborted signal answers aborted without parking', async () => {
    const w = new Waiters()
    const controller = new AbortController()
    controller.abort()
    const p = w.wait('k', 10_000, controller.signal)
    expect(w.size).toBe(0)
    expect(await p).toBe('aborted')
  })

  test('each waiter settles once: a later timeout or abort changes nothing', async () => {
    const w = new Waiters()
    const controller = new AbortController()
    const outcomes: WaitOutcome[] = []
    const p = w.wait('k', 30, controller.signal).then((o) => outcomes.push(o))
    w.wake('k')
    await p
    controller.abort()
    await sleep(80)
    expect(outcomes).toEqual(['woken'])
    expect(w.size).toBe(0)
  })

  test('close settles everything as closed and refuses new waiters', async () => {
    const w = new Waiters()
    const polls = [w.wait('a', 10_000), w.wait('a', 10_000), w.wait('b', 10_000)]
    expect(w.isClosed).toBe(false)
    w.close()
    expect(w.isClosed).toBe(true)
    expect(await Promise.all(polls)).toEqual(['closed', 'closed', 'closed'])
    expect(w.size).toBe(0)
    expect(await w.wait('a', 10_000)).toBe('closed')
    expect(w.size).toBe(0)
    w.wake('a')
  })

  test('wakeAll wakes every key as woken, counts as a wake, and later waiters park again', async () => {
    const w = new Waiters()
    const polls = [w.wait('a', 10_000), w.wait('a', 10_000), w.wait('b', 10_000)]
    const before = w.wakes
    w.wakeAll()
    expect(await Promise.all(polls)).toEqual(['woken', 'woken', 'woken'])
    expect(w.wakes).toBe(before + 1)
    expect(w.size).toBe(0)
    const later = track(w.wait('a', 10_000))
    await sleep(10)
    expect(later.settled()).toBe(false)
    w.wake('a')
    expect(await later.promise).toBe('woken')
    w.wakeAll()
    expect(w.size).toBe(0)
  })

  test('ten thousand waiters on one key: one wake, none left', async () => {
    const w = new Waiters()
    const polls = Array.from({ length: 10_000 }, () => w.wait('hot', 60_000))
    expect(w.size).toBe(10_000)
    w.wake('hot')
    const outcomes = await Promise.all(polls)
    expect(outcomes.every((o) => o === 'woken')).toBe(true)
    expect(w.size).toBe(0)
  })

  test('keys', () => {
    expect(channelKey('ch_1')).toBe('channel:ch_1')
    expect(askKey('msg_1')).toBe('ask:msg_1')
    expect(channelKey('x')).not.toBe(askKey('x'))
  })
})

describe('pollFor', () => {
  test('answers at once when the read has something, without parking', async () => {
    const w = new Waiters()
    let reads = 0
    const result = await pollFor(w, 'k', 10_000, undefined, () => {
      reads++
      return 'ready'
    })
    expect(result).toBe('ready')
    expect(reads).toBe(1)
    expect(w.size).toBe(0)
  })

  test('parks, then reads again on a wake', async () => {
    const w = new Waiters()
    let value: string | undefined
    const poll = pollFor(w, 'k', 10_000, undefined, () => value)
    await until(() => w.size === 1)
    value = 'changed'
    w.wake('k')
    expect(await poll).toBe('changed')
    expect(w.size).toBe(0)
  })

  test('a change and its wake landing while a read is under way are not lost', async () => {
    // The read parks nothing before it; a wake of any key during it means: read again.
    const w = new Waiters()
    let value: string | undefined
    const started = Promise.withResolvers<void>()
    const finish = Promise.withResolvers<void>()
    let reads = 0
    const poll = pollFor(w, 'k', 60_000, undefined, async () => {
      reads++
      if (reads === 1) {
        started.resolve()
        await finish.promise // the first read saw nothing; the change commits meanwhile
        return undefined
      }
      return value
    })
    await started.promise
    value = 'changed'
    w.wake('k')
    finish.resolve()
    expect(await poll).toBe('changed')
    expect(reads).toBe(2)
    expect(w.size).toBe(0)
  })

  test('a wake of another key during the read parks before the next read', async () => {
    // Under wakes without pause a poll must not re-read forever: after a raced read the next
    // is parked for first, and then only its own key wakes it.
    const w = new Waiters()
    let reads = 0
    const poll = pollFor(w, 'k', 60_000, undefined, async () => {
      reads++
      if (reads === 1) w.wake('other')
      return undefined
    })
    await until(() => w.size === 1)
    expect(reads).toBe(2)
    w.wake('other')
    await sleep(20)
    expect(reads).toBe(2)
    w.wake('k')
    await until(() => reads === 3)
    w.close()
    expect(await poll).toBeUndefined()
  })

  test('an irrelevant wake parks again, and the deadline still holds', async () => {
    const w = new Waiters()
    let reads = 0
    const poll = timed(
      pollFor(w, 'k', 300, undefined, () => {
        reads++
        return undefined
      }),
    )
    await sleep(100)
    w.wake('k')
    await sleep(10)
    expect(w.size).toBe(1)
    w.wake('k')
    const { value, ms } = await poll
    expect(value).toBeUndefined()
    expect(reads).toBe(3)
    expect(ms).toBeGreaterThanOrEqual(250)
    // Generous: re-parking must not restart the full wait each time.
    expect(ms).toBeLessThan(1000)
    expect(w.size).toBe(0)
  })

  test('the wait running out answers undefined', async () => {
    const w = new Waiters()
    expect(await pollFor(w, 'k', 30, undefined, () => undefined)).toBeUndefined()
    expect(await pollFor(w, 'k', 0, undefined, () => undefined)).toBeUndefined()
    expect(w.size).toBe(0)
  })

  test('an abort or a close answers undefined', async () => {
    const w = new Waiters()
    const controller = new AbortController()
    const aborted = pollFor(w, 'k', 10_000, controller.signal, () => undefined)
    controller.abort()
    expect(await aborted).toBeUndefined()
    const closed = pollFor(w, 'k', 10_000, undefined, () => undefined)
    w.close()
    expect(await closed).toBeUndefined()
    expect(w.size).toBe(0)
  })

  test('a read that throws rejects the poll and leaves nothing parked', async () => {
    const w = new Waiters()
    let gone = false
    const poll = pollFor(w, 'k', 10_000, undefined, () => {
      if (gone) throw new Error('deleted')
      return undefined
    })
    await until(() => w.size === 1)
    gone = true
    w.wake('k')
    await expect(poll).rejects.toThrow('deleted')
    expect(w.size).toBe(0)
  })
})
