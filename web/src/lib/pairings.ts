import { ApiError } from './api.ts'
import * as client from './client.ts'
import { pollSignal, waitToRetry } from './connection.ts'
import { sharedLive } from './shared-live.ts'
import type { Pairing } from './types.ts'

/**
 * The `hark init` requests waiting for the owner's answer, live: one long-poll on the list's
 * `version` (`GET /v1/app/pairings`), which the server answers when a pairing starts, is
 * answered, or the oldest shown expires. Shared by whatever shows it (Home, the setup wizard)
 * and held only while something does. Only the owner is shown pending pairings (anyone may
 * start one; approving gives its agent to whoever approves), so others never ask.
 */
const WAIT_SECONDS = 25

const pairings = sharedLive<Pairing[]>(follow)

async function follow(signal: AbortSignal) {
  let version: string | undefined
  let failures = 0
  while (!signal.aborted) {
    const poll = pollSignal(signal)
    try {
      // The first read answers at once; then each waits until the list differs.
      const page = await client.pendingPairings(
        version,
        version === undefined ? 0 : WAIT_SECONDS,
        poll.signal,
      )
      failures = 0
      version = page.version
      pairings.set(page.pairings)
    } catch (error) {
      if (signal.aborted) return
      if ((error as Error).name === 'AbortError') continue // back online: poll again at once
      if (error instanceof ApiError && error.status === 403) return // not the owner
      version = undefined
      await waitToRetry(++failures, signal)
    } finally {
      poll.done()
    }
  }
}

/** Forgets a pairing answered here, before the server's next list says so. */
export function dropPairing(code: string) {
  if (pairings.value) pairings.set(pairings.value.filter((p) => p.user_code !== code))
}

/** The pending pairings while `enabled` (the owner), else null; live. */
export const usePendingPairings = (enabled: boolean): Pairing[] | null => pairings.use(enabled)
