import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { ApiError } from './api.ts'
import * as client from './client.ts'
import { pollSignal, waitToRetry } from './connection.ts'
import { KEPT_PER_THREAD, savedThread, saveThread } from './offline-store.ts'
import type { DeletedMessage, Message } from './types.ts'

/**
 * A channel's messages. Opening reads only the newest page (`?tail=`) and the pins, then
 * long-polls the channel's change feed from the cursor that page came with (the server
 * answers the moment anything changes: a new message, an edit, an answer, the agent's
 * seen/working/done, a delete). Older pages load on demand, newest first (`&before=`).
 * What was last seen is kept in IndexedDB (offline-store.ts): a thread opened offline shows it
 * until the server answers, and a server that went away is retried (connection.ts) until then.
 */
const WAIT_SECONDS = 25
const PAGE = 50

export interface ChannelFeed {
  messages: Message[]
  pins: Message[]
  loaded: boolean
  /** True while older messages exist that are not loaded yet. */
  hasOlder: boolean
  loadingOlder: boolean
  loadOlder(): void
  /** Set while the server cannot be reached; cleared by the next good answer. */
  offline: boolean
  notFound: boolean
  /** Folds in a message the app already has (its own send, an answer) without waiting. */
  upsert(m: Message): void
}

/**
 * The thread keeps the server's order, never a sort by time: messages sent within the same
 * millisecond have equal `created_at`, and ids are random. The map's insertion order is the
 * order: the tail's (oldest first), older pages in front, then the change feed's order of first
 * appearance (its cursor order) at the end. Only pins, a list of their own, go by time.
 */
const byTime = (a: Message, b: Message) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1)

export function useChannelFeed(channelId: string, onChange?: () => void): ChannelFeed {
  const [map, setMap] = useState(() => new Map<string, Message>())
  const [loaded, setLoaded] = useState(false)
  const [offline, setOffline] = useState(false)
  const [notFound, setNotFound] = useState(false)
  const [hasOlder, setHasOlder] = useState(false)
  const [loadingOlder, setLoadingOlder] = useState(false)
  const changed = useRef(onChange)
  changed.current = onChange
  // The oldest message loaded: changes to anything older wait until that page is read.
  const oldest = useRef<Message | undefined>(undefined)
  // The person's own sends, shown before the feed brings them: the feed then puts each in its
  // place (after an agent message that reached the server first but the feed later).
  const provisional = useRef(new Set<string>())

  useEffect(() => {
    const abort = new AbortController()
    setMap(new Map())
    setLoaded(false)
    setNotFound(false)
    setHasOlder(false)
    oldest.current = undefined
    provisional.current.clear()
    const apply = (items: (Message | DeletedMessage)[]) => {
      if (items.length === 0) return
      setMap((old) => {
        const next = new Map(old)
        for (const m of items) {
          if ('deleted' in m) next.delete(m.id)
          else if (next.has(m.id) && !provisional.current.has(m.id))
            next.set(m.id, m) // in place
          else if (next.has(m.id) || m.pin !== undefined || !isBefore(m, oldest.current)) {
            next.delete(m.id) // new (or a send of ours): at the end, in the feed's order
            next.set(m.id, m)
          }
          provisional.current.delete(m.id)
        }
        return next
      })
      changed.current?.()
    }
    // Out of reach at opening: what was saved last time, until the server answers. Only then,
    // never racing the server's page: a snapshot replaced a moment later would move the thread
    // under the person (and lose the message a link pointed at).
    let showedSaved = false
    const showSaved = async () => {
      showedSaved = true
      const saved = await savedThread(channelId)
      if (!saved || abort.signal.aborted) return
      oldest.current = saved.messages[0]
      setMap(new Map([...saved.messages, ...saved.pins].map((m) => [m.id, m])))
      setHasOlder(saved.hasOlder)
      setLoaded(true)
    }
    const run = async () => {
      let cursor: number | undefined
      let failures = 0
      while (!abort.signal.aborted) {
        try {
          if (cursor === undefined) {
            const [page, pins] = await Promise.all([
              client.latestMessages(channelId, PAGE, { signal: abort.signal }),
              client.pinnedMessages(channelId, abort.signal),
            ])
            const first = page.messages as Message[]
            oldest.current = first[0]
            setMap(new Map([...first, ...pins].map((m) => [m.id, m])))
            setHasOlder(page.has_more)
            cursor = page.cursor
            setLoaded(true)
            changed.current?.()
          }
          const poll = pollSignal(abort.signal)
          const page = await client
            .channelFeed(channelId, cursor, WAIT_SECONDS, poll.signal)
            .finally(poll.done)
          apply(page.messages as (Message | DeletedMessage)[])
          cursor = page.cursor
          setOffline(false)
          failures = 0
        } catch (error) {
          if (abort.signal.aborted) return
          if (error instanceof ApiError && error.status === 404) {
            setNotFound(true)
            setLoaded(true)
            return
          }
          if (error instanceof ApiError && error.status === 401) {
            location.reload() // the session ended: the app shows the login screen
            return
          }
          // Back online mid-poll: poll again at once, from the same cursor.
          if ((error as Error).name === 'AbortError') continue
          setOffline(true)
          if (cursor === undefined && !showedSaved) await showSaved()
          await waitToRetry(++failures, abort.signal)
        }
      }
    }
    void run()
    return () => abort.abort()
  }, [channelId])

  // Keep the newest of what is on screen for next time offline (a moment after it settles:
  // a burst of changes is one write). The person's queued sends are not in it: the outbox
  // keeps those itself.
  useEffect(() => {
    if (!loaded || notFound) return
    const timer = setTimeout(() => {
      const all = [...map.values()]
      const messages = all.filter((m) => m.pin === undefined)
      const pins = all.filter((m) => m.pin !== undefined)
      const kept = messages.length > KEPT_PER_THREAD || hasOlder
      void saveThread({ channelId, messages, pins, hasOlder: kept })
    }, 500)
    return () => clearTimeout(timer)
  }, [map, loaded, notFound, hasOlder, channelId])

  const loadOlder = async () => {
    const before = oldest.current
    if (!before || loadingOlder) return
    setLoadingOlder(true)
    try {
      const page = await client.latestMessages(channelId, PAGE, { before: before.id })
      const older = page.messages as Message[]
      if (oldest.current !== before) return // the channel changed meanwhile
      oldest.current = older[0] ?? before
      // In front of what is loaded, in the page's order (oldest first).
      setMap(
        (old) =>
          new Map([...older.filter((m) => !old.has(m.id)).map((m) => [m.id, m] as const), ...old]),
      )
      setHasOlder(page.has_more)
    } catch {
      // Offline: the button stays, and the live feed shows the banner.
    } finally {
      setLoadingOlder(false)
    }
  }

  return useMemo(() => {
    const all = [...map.values()]
    return {
      messages: all.filter((m) => m.pin === undefined),
      pins: all.filter((m) => m.pin !== undefined).sort(byTime),
      loaded,
      hasOlder,
      loadingOlder,
      loadOlder: () => void loadOlder(),
      offline,
      notFound,
      upsert: (m: Message) =>
        setMap((old) => {
          // The feed may already hold a newer form of it (an edit right after the answer).
          const known = old.get(m.id)
          if (!known) provisional.current.add(m.id)
          return known && known.updated_at > m.updated_at ? old : new Map(old).set(m.id, m)
        }),
    }
  }, [map, loaded, hasOlder, loadingOlder, offline, notFound])
}

/**
 * Is `m` older than the oldest loaded message (so not on screen yet)? Only a strictly earlier
 * millisecond counts: a message of the same one may be new, and dropping a new message is worse
 * than showing an edit of an old one at the end until the next reload.
 */
function isBefore(m: Message, oldest: Message | undefined): boolean {
  return oldest !== undefined && m.created_at < oldest.created_at
}
