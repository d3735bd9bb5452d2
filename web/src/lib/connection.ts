import { useWatched } from './watched.ts'

/**
 * Reaching the server again, shared by every loop that must (the thread's feed, the channel
 * list's feed, the outbox): how long to wait before the next try, what cuts that wait short,
 * and whether the app should say it is offline.
 *
 * While the page is visible a person is looking at it, so a restarted server must show up in
 * seconds: retries come every ~0.5 s (jittered so a thousand phones do not knock in step), never
 * more than 1 s apart, whatever number of failures came before. A hidden page backs off to 30 s,
 * sparing the battery and a server that is down for a while. Coming online, focusing the window
 * or the page turning visible ends any wait at once.
 */
const VISIBLE_MS = 500
const VISIBLE_MAX_MS = 1000
const HIDDEN_FIRST_MS = 1000
const HIDDEN_MAX_MS = 30_000
/** How long the server may stay out of reach before the app says so (a blip is not worth it). */
export const UNREACHABLE_CUE_MS = 3000

const visible = () => document.visibilityState === 'visible'

/** The wait before retry number `failures` (1 for the first retry). */
export function retryDelay(failures: number): number {
  if (visible()) return Math.min(VISIBLE_MS * (0.6 + Math.random() * 0.8), VISIBLE_MAX_MS)
  return Math.min(HIDDEN_FIRST_MS * 2 ** Math.max(0, failures - 1), HIDDEN_MAX_MS)
}

type Listener = () => void
const wakers = new Set<Listener>()
const wake = () => {
  for (const w of [...wakers]) w()
}
window.addEventListener('online', wake)
window.addEventListener('focus', wake)
document.addEventListener('visibilitychange', () => {
  if (visible()) wake()
})

/** Calls `listener` whenever waiting should stop: online, focus, visible. Answers the undo. */
export function onWake(listener: Listener): () => void {
  wakers.add(listener)
  return () => wakers.delete(listener)
}

/**
 * Waits before retry number `failures`; resolves early on a wake or when `signal` aborts (the
 * caller checks the signal: an aborted loop must not try again).
 */
export function waitToRetry(failures: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      undo()
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, retryDelay(failures))
    const undo = onWake(done)
    signal?.addEventListener('abort', done)
  })
}

// Reachability: loops report each answer or failure; the cue follows.

/** Since when the server has been out of reach; undefined while it answers. */
let failingSince: number | undefined
let online = navigator.onLine
let offline = false
const watchers = new Set<(offline: boolean) => void>()
let cueTimer: ReturnType<typeof setTimeout> | undefined

function update() {
  const unreachable = failingSince !== undefined && Date.now() - failingSince >= UNREACHABLE_CUE_MS
  const next = !online || unreachable
  if (next === offline) return
  offline = next
  for (const w of watchers) w(offline)
}

window.addEventListener('online', () => {
  online = true
  update()
})
window.addEventListener('offline', () => {
  online = false
  update()
})

/** The server answered (anything, even an error of its own): it is reachable. */
export function reachable(): void {
  online = navigator.onLine
  failingSince = undefined
  clearTimeout(cueTimer)
  update()
}

/** A request could not reach the server. The cue shows if this lasts `UNREACHABLE_CUE_MS`. */
export function unreachable(): void {
  if (failingSince === undefined) {
    failingSince = Date.now()
    cueTimer = setTimeout(update, UNREACHABLE_CUE_MS)
  }
  update()
}

/** Whether the app should say it is offline; re-renders the caller when that changes. */
export const useOffline = (): boolean => useWatched(watchers, () => offline)

/**
 * A signal for one long-poll: aborts with `signal`, or when the browser comes back online (a
 * request begun on the old network may hang on a dead socket for its whole wait). The caller
 * tells the two apart by `signal.aborted` and simply polls again. `done` drops the listener.
 */
export function pollSignal(signal: AbortSignal): { signal: AbortSignal; done(): void } {
  const own = new AbortController()
  const abort = () => own.abort()
  signal.addEventListener('abort', abort)
  window.addEventListener('online', abort)
  return {
    signal: own.signal,
    done() {
      signal.removeEventListener('abort', abort)
      window.removeEventListener('online', abort)
    },
  }
}
