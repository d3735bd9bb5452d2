import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Clock } from '../src/core/clock.ts'

/**
 * The harness's small aids, which need no server: a temporary directory, a settable clock, the
 * ordering waits and the expected-failure check. test/harness.ts re-exports them, so a test
 * imports them from there like the rest of the harness.
 */

export function tempDir(prefix = 'hark-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** A settable clock, so expiry and rate limits are tested without waiting. */
export class TestClock implements Clock {
  constructor(public ms = Date.now()) {}
  now = () => this.ms
  advance(ms: number): void {
    this.ms += ms
  }
}

/** Resolves after `ms`; for ordering, never as a performance assertion. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A promise and its resolver: a gate a unit awaits (`wait`), opened by the test (`open`). */
export function gate(): { wait: Promise<void>; open: () => void } {
  const { promise, resolve } = Promise.withResolvers<void>()
  return { wait: promise, open: () => resolve() }
}

/** Waits until `cond` holds (a poll parked, say); an ordering aid, not a timing assertion. */
export async function until(cond: () => boolean, ms = 3000): Promise<void> {
  const deadline = performance.now() + ms
  while (!cond()) {
    if (performance.now() > deadline) throw new Error('condition not reached in time')
    await sleep(5)
  }
}

/** Expects a promise to reject with a HarkApiError of `status`; returns the error. */
export async function failsWith(
  promise: Promise<unknown>,
  status: number,
): Promise<{ status: number; error: string; field?: string; headers: Headers }> {
  try {
    await promise
  } catch (error) {
    const e = error as { status?: number; error?: string; field?: string; headers: Headers }
    if (e.status !== status) {
      throw new Error(`expected ${status}, got ${e.status}: ${e.error ?? error}`)
    }
    return e as { status: number; error: string; field?: string; headers: Headers }
  }
  throw new Error(`expected ${status}, but the request succeeded`)
}
