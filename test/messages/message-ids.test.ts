import { describe, expect, test } from 'bun:test'
import { newMessageId } from '../../src/core/ids.ts'
import { startTestServer, TestClock } from '../harness.ts'

// Message ids follow the clock so that the unique index on messages.id is appended to, not
// written all over (bench/README.md, "The send path, fourth pass"); they stay opaque and unique.
describe('message ids', () => {
  test('are msg_, 8 characters of time and 14 random ones, unique within one millisecond', () => {
    const ids = new Set<string>()
    for (let i = 0; i < 2000; i++) {
      const id = newMessageId(1_795_000_000_000)
      expect(id).toMatch(/^msg_[0-9A-Za-z]{22}$/)
      ids.add(id)
    }
    expect(ids.size).toBe(2000)
  })

  test('made later sort after in byte order, across every digit boundary of the time', () => {
    const times = [0, 1, 61, 62, 63, 3843, 3844, 238_327, 238_328, Date.UTC(2026, 10, 28)]
    for (let i = 62; i < 62 ** 8; i *= 62) times.push(i - 1, i)
    const sorted = [...new Set(times)].sort((a, b) => a - b)
    const ids = sorted.map((t) => newMessageId(t).slice(0, 12))
    for (let i = 1; i < ids.length; i++) {
      const [before, after] = [ids[i - 1] as string, ids[i] as string]
      // SQLite compares TEXT by bytes (BINARY): so does `<` on these ASCII strings.
      expect(before < after, `${sorted[i - 1]} → ${before}, ${sorted[i]} → ${after}`).toBe(true)
    }
  })

  test('POST /v1/messages: a message sent later has an id that sorts after', async () => {
    const clock = new TestClock()
    const s = await startTestServer({ clock })
    try {
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        const { message } = await s.agent.send({ body: { text: `n${i}` } })
        ids.push(message.id)
        clock.advance(1)
      }
      expect([...ids].sort()).toEqual(ids)
      expect(new Set(ids).size).toBe(3)
    } finally {
      await s.close()
    }
  })
})
