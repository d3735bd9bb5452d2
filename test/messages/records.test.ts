import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { feedJson, recordJson, toRecord } from '../../src/messages/records.ts'
import type { MessageRow } from '../../src/messages/store.ts'

/**
 * The feeds send `recordJson` (built from the stored text, without parsing it); everything
 * else uses `toRecord`. They must give the same bytes for any row the database can hold: a
 * body and an answer are stored as `JSON.stringify` output, and parse-then-serialise of such
 * text gives it back unchanged.
 */

const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v))
const stamp = fc.integer({ min: 0, max: 4_102_444_800_000 })
const row: fc.Arbitrary<MessageRow> = fc.record({
  rid: fc.nat(),
  id: fc.string({ maxLength: 20 }),
  channel_id: fc.string({ maxLength: 20 }),
  seq: fc.nat(),
  sender: fc.constantFrom('agent' as const, 'human' as const),
  body: fc.option(
    fc
      .dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }))
      .map((b) => JSON.stringify(b)),
    { freq: 8 },
  ),
  silent: fc.constantFrom(0, 1),
  state: fc.constantFrom(null, 'seen' as const, 'working' as const, 'done' as const),
  pin_key: fc.option(fc.string({ maxLength: 10 })),
  ask_status: fc.constantFrom(
    null,
    'open' as const,
    'answered' as const,
    'expired' as const,
    'cancelled' as const,
  ),
  ask_expires_at: fc.option(stamp),
  ask_answered_at: fc.option(stamp),
  answer: fc.option(json),
  ask_request_hash: fc.option(fc.stringMatching(/^[0-9a-f]{64}$/)),
  ask_reason: fc.option(fc.string({ maxLength: 30 })),
  ask_proof: fc.option(
    fc
      .record({ credential_id: fc.string(), signature: fc.string(), answered_at: stamp })
      .map((p) => JSON.stringify(p)),
  ),
  created_at: stamp,
  updated_at: stamp,
  deleted_at: fc.option(stamp, { freq: 8 }),
})

test('recordJson(row) is JSON.stringify(toRecord(row)), byte for byte, for any stored row', () => {
  fc.assert(
    fc.property(row, (r) => {
      expect(recordJson(r)).toBe(JSON.stringify(toRecord(r)))
    }),
    { numRuns: 500, seed: 42 },
  )
})

test('feedJson(rows) is the FeedResponse of those records, byte for byte', () => {
  fc.assert(
    fc.property(fc.array(row, { maxLength: 8 }), fc.nat(), fc.boolean(), (rows, cursor, more) => {
      expect(feedJson(rows, cursor, more)).toBe(
        JSON.stringify({ messages: rows.map(toRecord), cursor, has_more: more }),
      )
    }),
    { numRuns: 200, seed: 42 },
  )
})
