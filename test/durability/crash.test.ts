import { afterAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { tempDir } from '../harness.ts'
import { crashLoop } from './crashloop.ts'

/**
 * The CI-sized crash test: `dist/hark` under mixed writes, killed with SIGKILL three times at
 * random moments; every acknowledged write must survive, the database stay sound and no
 * partial or orphan file remain. `bun bench/crash.ts --rounds 20` is the long run.
 */
const dir = tempDir('hark-crash-')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('acknowledged writes survive kill -9', async () => {
  const summary = await crashLoop({ dir, rounds: 3, minMs: 300, maxMs: 1500 })
  expect(summary.failures).toEqual([])
  // The load really ran: the test proves something only if writes were acknowledged.
  expect(summary.acked.messages).toBeGreaterThan(50)
  expect(summary.acked.answers).toBeGreaterThan(0)
  expect(summary.acked.files).toBeGreaterThan(0)
}, 50_000)
