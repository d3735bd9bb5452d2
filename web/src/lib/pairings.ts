import { useEffect, useState } from 'preact/hooks'
import { ApiError } from './api.ts'
import * as client from './client.ts'
import { pollSignal, waitToRetry } from './connection.ts'
import type { Pairing } from './types.ts'

/**
 * The `hark init` requests waiting for the owner's answer, live: one long-poll on the list's
 * `version` (`GET /v1/app/pairings`), which the server answers when a pairing starts, is
 * answered, or the oldest shown expires. Shared by whatever shows it (Home, the setup wizard)
 * and held only while something does. Only the owner is shown pending pairings (anyone may
 * start one; approving gives its agent to whoever approves), so others never ask.
 */
const WAIT_SECONDS = 25

let pairings: Pairing[] | null = null
const subscribers = new Set<(p: Pairing[] | null) => void>()
let live: AbortController | undefined

function publish(next: Pairing[]) {
  pairings = next
  for (const s of subscribers) s(pairings)
}

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
      publish(page.pairings)
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
  if (pairings) publish(pairings.filter((p) => p.user_code !== code))
}

/** The pending pairings while `enabled` (the owner), else null; live. */
export function usePendingPairings(enabled: boolean): Pairing[] | null {
  const [value, setValue] = useState(enabled ? pairings : null)
  useEffect(() => {
    if (!enabled) return
    subscribers.add(setValue)
    setValue(pairings)
    if (!live) {
      live = new AbortController()
      void follow(live.signal)
    }
    return () => {
      subscribers.delete(setValue)
      // Moving between screens that both show it unmounts one as the next mounts: keep it.
      setTimeout(() => {
        if (subscribers.size > 0) return
        live?.abort()
        live = undefined
      })
    }
  }, [enabled])
  return enabled ? value : null
}
