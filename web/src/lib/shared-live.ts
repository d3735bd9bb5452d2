import { useEffect, useState } from 'preact/hooks'

/**
 * A value several screens may show at once (the channel list, the pending pairings), kept live
 * by one loop, `follow`, that runs only while something shows it: the first reader starts it,
 * the last one's leaving aborts it. Readers get each value `set` publishes.
 */
export interface SharedLive<T> {
  /** The last value published, or null before the first. */
  readonly value: T | null
  /** Whether anything shows the value now. */
  readonly watched: boolean
  /** Publishes `next` to every reader. */
  set(next: T): void
  /** A hook: the value while `enabled`, live; null when not. */
  use(enabled?: boolean): T | null
}

export function sharedLive<T>(follow: (signal: AbortSignal) => Promise<void>): SharedLive<T> {
  let value: T | null = null
  const readers = new Set<(v: T | null) => void>()
  let live: AbortController | undefined
  return {
    get value() {
      return value
    },
    get watched() {
      return readers.size > 0
    },
    set(next) {
      value = next
      for (const r of readers) r(value)
    },
    use(enabled = true) {
      const [seen, setSeen] = useState(enabled ? value : null)
      useEffect(() => {
        if (!enabled) return
        readers.add(setSeen)
        setSeen(value)
        if (!live) {
          live = new AbortController()
          void follow(live.signal)
        }
        return () => {
          readers.delete(setSeen)
          // Moving between screens that both show it unmounts one reader as the next mounts:
          // keep the loop unless nothing took it up by the next turn.
          setTimeout(() => {
            if (readers.size > 0) return
            live?.abort()
            live = undefined
          })
        }
      }, [enabled])
      return enabled ? seen : null
    },
  }
}
