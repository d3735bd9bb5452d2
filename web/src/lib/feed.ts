import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { ApiError, get } from './api.ts'
import type { DeletedMessage, FeedResponse, Message } from './types.ts'

/**
 * A channel's messages, kept live by long-polling the person's change feed: read every page
 * from cursor 0, then hold one request open (the server answers the moment anything changes:
 * a new message, an edit, an answer, the agent's seen/working/done, a delete). Pins are
 * messages with a `pin` key and travel in the same feed.
 */
const WAIT_SECONDS = 25

export interface ChannelFeed {
  messages: Message[]
  pins: Message[]
  loaded: boolean
  /** Set while the server cannot be reached; cleared by the next good answer. */
  offline: boolean
  notFound: boolean
  /** Folds in a message the app already has (its own send, an answer) without waiting. */
  upsert(m: Message): void
}

const byTime = (a: Message, b: Message) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1)

export function useChannelFeed(channelId: string, onChange?: () => void): ChannelFeed {
  const [map, setMap] = useState(() => new Map<string, Message>())
  const [loaded, setLoaded] = useState(false)
  const [offline, setOffline] = useState(false)
  const [notFound, setNotFound] = useState(false)
  const changed = useRef(onChange)
  changed.current = onChange

  useEffect(() => {
    const abort = new AbortController()
    setMap(new Map())
    setLoaded(false)
    setNotFound(false)
    const apply = (items: (Message | DeletedMessage)[]) => {
      if (items.length === 0) return
      setMap((old) => {
        const next = new Map(old)
        for (const m of items) {
          if ('deleted' in m) next.delete(m.id)
          else next.set(m.id, m as Message)
        }
        return next
      })
      changed.current?.()
    }
    const run = async () => {
      let cursor = 0
      let backoff = 1000
      while (!abort.signal.aborted) {
        try {
          // Catch up at once while pages are full; then wait for the next change.
          let page: FeedResponse
          do {
            page = await get<FeedResponse>(
              `/v1/app/channels/${encodeURIComponent(channelId)}/messages?since=${cursor}&wait=0`,
              abort.signal,
            )
            apply(page.messages as (Message | DeletedMessage)[])
            cursor = page.cursor
          } while (page.has_more)
          setLoaded(true)
          setOffline(false)
          backoff = 1000
          for (;;) {
            page = await get<FeedResponse>(
              `/v1/app/channels/${encodeURIComponent(channelId)}/messages?since=${cursor}&wait=${WAIT_SECONDS}`,
              abort.signal,
            )
            apply(page.messages as (Message | DeletedMessage)[])
            cursor = page.cursor
            setOffline(false)
          }
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
          setOffline(true)
          await new Promise((r) => setTimeout(r, backoff))
          backoff = Math.min(backoff * 2, 30_000)
        }
      }
    }
    void run()
    return () => abort.abort()
  }, [channelId])

  return useMemo(() => {
    const all = [...map.values()].sort(byTime)
    return {
      messages: all.filter((m) => m.pin === undefined),
      pins: all.filter((m) => m.pin !== undefined),
      loaded,
      offline,
      notFound,
      upsert: (m: Message) =>
        setMap((old) => {
          // The feed may already hold a newer form of it (an edit right after the answer).
          const known = old.get(m.id)
          return known && known.updated_at > m.updated_at ? old : new Map(old).set(m.id, m)
        }),
    }
  }, [map, loaded, offline, notFound])
}
